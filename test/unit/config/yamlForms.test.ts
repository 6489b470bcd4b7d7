import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome | undefined;
afterEach(() => home?.cleanup());

function write(yaml: string): { dir: string; file: string } {
  const h = tempHome();
  home = h;
  return { dir: h.dir, file: h.write("config.yaml", yaml) };
}

/** The message loading `dir`'s config.yaml fails with ("" when it loads). */
function loadError(dir: string): string {
  try {
    loadConfig({ home: dir, env: {} });
    return "";
  } catch (err) {
    return (err as Error).message;
  }
}

describe("config.yaml written the ways YAML users write it", () => {
  it("merge keys (<<: *anchor) share route settings, the route's own keys win", () => {
    const { dir } = write(
      [
        "platforms:",
        "  webhook:",
        "    routes:",
        "      github: &gh",
        "        secret: shared",
        "        events: [push]",
        "      github-prs:",
        "        <<: *gh",
        "        events: [pull_request]",
        "",
      ].join("\n"),
    );
    const routes = loadConfig({ home: dir, env: {} }).config.platforms.webhook.routes;
    expect(routes["github-prs"]).toMatchObject({ secret: "shared", events: ["pull_request"] });
    expect(routes.github).toMatchObject({ secret: "shared", events: ["push"] });
  });

  it("a second document after --- is refused in words, not the parser's API advice", () => {
    const { dir, file } = write("platforms:\n  webhook:\n    port: 1\n---\nagent: {}\n");
    expect(() => loadConfig({ home: dir, env: {} })).toThrow(
      `${file}: line 4: not valid YAML — the file holds more than one YAML document (a --- line) at line 4, column 1 — keep one document`,
    );
  });

  it("a top level that is a list or a scalar names what it got and what it should be", () => {
    const list = write("- platforms\n- agent\n");
    expect(() => loadConfig({ home: list.dir, env: {} })).toThrow(
      `${list.file}: the top level must be a mapping of sections (platforms:, agent:, gateway:, mcp_servers:), got a list`,
    );
  });
});

describe("an MCP server's client_cert list", () => {
  it("a key password written as a number is taken as written ([cert, key, 0123] is the password 0123), not refused", () => {
    const { dir } = write(
      [
        "mcp_servers:",
        "  corp:",
        "    url: https://mcp.corp.example/mcp",
        "    client_cert: [/certs/me.crt, /certs/me.key, 0123]",
        "  pin:",
        "    url: https://mcp.corp.example/mcp",
        "    client_cert: [/certs/me.crt, /certs/me.key, 123456]",
        "",
      ].join("\n"),
    );
    const servers = loadConfig({ home: dir, env: {} }).config.mcp_servers;
    expect(servers.corp?.client_cert).toEqual(["/certs/me.crt", "/certs/me.key", "0123"]);
    expect(servers.pin?.client_cert).toEqual(["/certs/me.crt", "/certs/me.key", "123456"]);
  });
});

describe("an MCP server's argument written ~", () => {
  it("is the home directory's ~ (expanded at connect like ~/x), not YAML's null refused as 'has no value'", () => {
    const { dir } = write(
      [
        "mcp_servers:",
        "  files:",
        "    command: npx",
        "    args: [-y, '@modelcontextprotocol/server-filesystem', ~]",
        "  block:",
        "    command: npx",
        "    args:",
        "      - --root",
        "      - ~",
        "      - ''",
        "",
      ].join("\n"),
    );
    const servers = loadConfig({ home: dir, env: {} }).config.mcp_servers;
    expect(servers.files?.args).toEqual(["-y", "@modelcontextprotocol/server-filesystem", "~"]);
    expect(servers.block?.args).toEqual(["--root", "~", ""]);
  });

  it("an entry with nothing written is still refused", () => {
    const { dir, file } = write("mcp_servers:\n  x:\n    command: npx\n    args:\n      - --root\n      -\n");
    expect(() => loadConfig({ home: dir, env: {} })).toThrow(
      `${file}: mcp_servers.x.args[1]: has no value — write "" for an empty argument, or remove the entry`,
    );
  });
});

describe("named entries written as a list, as other tools write them", () => {
  it("routes and mcp_servers as [- name: x] say to key each entry by its name", () => {
    const { dir } = write(
      "platforms:\n  webhook:\n    routes:\n      - name: github\n        secret: s3cret\nmcp_servers:\n  - name: gh\n    command: x\n",
    );
    const message = loadError(dir);
    expect(message).toContain(
      'platforms.webhook.routes: expected a mapping, got a list (not shown: it holds a secret) — write each entry under its name, not as a list item with name: (github: on its own line, its other keys indented under it, no "- " and no name: key)',
    );
    expect(message).toContain("mcp_servers: expected a mapping, got");
    expect(message).toContain("(gh: on its own line");
    expect(message).not.toContain("s3cret");
  });

  it('routes and mcp_servers as [- github: {...}] (each entry\'s name after a "- ") say to drop the "- "', () => {
    const { dir } = write(
      "platforms:\n  webhook:\n    routes:\n      - github:\n          secret: s3cret\n      - stripe:\n          events: [x]\nmcp_servers:\n  - fs:\n      command: npx\n",
    );
    const message = loadError(dir);
    expect(message).toContain(
      'platforms.webhook.routes: expected a mapping, got a list (not shown: it holds a secret) — write each entry without the "- " before its name (github: on its own line, its keys indented under it)',
    );
    expect(message).toContain(
      'mcp_servers: expected a mapping, got [{"fs":{"command":"npx"}}] — write each entry without the "- " before its name (fs: on its own line, its keys indented under it)',
    );
    expect(message).not.toContain("s3cret");
  });
});
