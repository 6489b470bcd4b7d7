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

describe("a template or colon left unquoted, as templates are first written", () => {
  const route = (lines: string) => `platforms:\n  webhook:\n    secret: x\n    routes:\n      r:\n${lines}`;
  const problems = (yaml: string) => {
    const { dir } = write(yaml);
    try {
      loadConfig({ home: dir, env: {} });
    } catch (err) {
      return (err as Error).message;
    }
    return "";
  };

  it("a whole {template} read as a mapping says to quote it (prompt, deliver_extra, coalesce.key)", () => {
    const message = problems(
      route(
        "        prompt: {pull_request.title}\n        deliver_extra: {repo: {repository.full_name}}\n        coalesce: {key: {number}}\n",
      ),
    );
    expect(message).toContain(
      `routes.r.prompt: expected a string, got {"pull_request.title":null} — YAML reads an unquoted {pull_request.title} as a mapping: put the template in quotes ("{pull_request.title}")`,
    );
    expect(message).toContain(
      `routes.r.deliver_extra.repo: expected text (a {template}), a number or true/false — YAML reads an unquoted {repository.full_name} as a mapping: put the template in quotes ("{repository.full_name}")`,
    );
    expect(message).toContain(`routes.r.coalesce.key: expected a string, got {"number":null} — YAML reads`);
  });

  it("under a key holding a secret the hint does not quote the value", () => {
    const message = problems("platforms:\n  webhook:\n    secret: {topsecret}\n");
    expect(message).toContain(
      "platforms.webhook.secret: expected a string, got a mapping (not shown: the key holds a secret) — YAML reads an unquoted {...} as a mapping: put the value in quotes",
    );
    expect(message).not.toContain("topsecret");
  });

  it("text after a {template}, a ': ' inside a value and a leading @ are named with the quoting fix", () => {
    expect(problems(route("        prompt: {number} was opened\n"))).toMatch(
      /line 6: not valid YAML — .* put the whole value in quotes \(prompt: "\{number\} was opened"\)$/,
    );
    expect(problems(route("        prompt: Review: {number}\n"))).toMatch(
      /line 6: not valid YAML — .* a value with ": " \(a colon and a space\) in it is read as a mapping: put the whole value in quotes/,
    );
    expect(problems(route("        prompt: @here {x}\n"))).toMatch(/— put the whole value in quotes$/);
  });
});

describe("named entries written as a list, as other tools write them", () => {
  it("routes and mcp_servers as [- name: x] say to key each entry by its name", () => {
    const { dir } = write(
      "platforms:\n  webhook:\n    routes:\n      - name: github\n        secret: s3cret\nmcp_servers:\n  - name: gh\n    command: x\n",
    );
    let message = "";
    try {
      loadConfig({ home: dir, env: {} });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain(
      'platforms.webhook.routes: expected a mapping, got a list (not shown: it holds a secret) — write each entry under its name, not as a list item with name: (github: on its own line, its other keys indented under it, no "- " and no name: key)',
    );
    expect(message).toContain("mcp_servers: expected a mapping, got");
    expect(message).toContain("(gh: on its own line");
    expect(message).not.toContain("s3cret");
  });
});
