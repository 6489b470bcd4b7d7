import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { addServers, removeServer } from "../../../src/io/mcpServersEdit.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home.cleanup());

// One entry's settings shared with YAML anchors, as a file with several similar servers writes them.
const SHARED = [
  "mcp_servers:",
  "  a: &base",
  "    command: node",
  "    args: &ar [x]",
  "  b: *base",
  "  c:",
  "    <<: *base",
  "    args: [y]",
  "  e: { command: n, args: *ar }",
  "",
].join("\n");

const servers = () =>
  Object.fromEntries(
    Object.entries(loadConfig({ home: home.dir, env: {} }).config.mcp_servers).map(([name, e]) => [
      name,
      [e.command, ...(e.args ?? [])],
    ]),
  );

describe("svc mcp remove / add --force of an entry whose anchors other entries use", () => {
  it("remove: the first alias takes the anchored settings, so every other entry keeps its own, as written", () => {
    home = tempHome();
    const config = home.write("config.yaml", SHARED);
    expect(removeServer(config, "a")).toBe(true);
    expect(readFileSync(config, "utf8")).toBe(
      [
        "mcp_servers:",
        "  b: &base",
        "    command: node",
        "    args: &ar [ x ]",
        "  c:",
        "    <<: *base",
        "    args: [y]",
        "  e: { command: n, args: *ar }",
        "",
      ].join("\n"),
    );
    expect(servers()).toEqual({ b: ["node", "x"], c: ["node", "y"], e: ["n", "x"] });
  });

  it("add --force (import --force) replacing it: the others keep theirs too, as written", () => {
    home = tempHome();
    const config = home.write("config.yaml", SHARED);
    addServers(config, { a: { command: "deno" } }, { doing: "add", replace: true });
    expect(servers()).toEqual({ a: ["deno"], b: ["node", "x"], c: ["node", "y"], e: ["n", "x"] });
    expect(readFileSync(config, "utf8")).toBe(
      [
        "mcp_servers:",
        "  a:",
        "    command: deno",
        "  b: &base",
        "    command: node",
        "    args: &ar [ x ]",
        "  c:",
        "    <<: *base",
        "    args: [y]",
        "  e: { command: n, args: *ar }",
        "",
      ].join("\n"),
    );
  });

  it("a merge key takes the copy under its line; a CRLF file with a byte order mark keeps every other byte", () => {
    home = tempHome();
    const config = home.write(
      "config.yaml",
      [
        "\uFEFFmcp_servers:",
        "    # shared settings",
        "    a: &base",
        "        command: node",
        "        args: [x]    # one arg",
        "    c:",
        "        <<: *base   # from a",
        "        args: [y]",
        "    b:    *base",
        "agent:",
        "    provider:   echo",
        "",
      ].join("\r\n"),
    );
    expect(removeServer(config, "a")).toBe(true);
    expect(readFileSync(config, "utf8")).toBe(
      [
        "\uFEFFmcp_servers:",
        "    c:",
        "        <<: &base   # from a",
        "          command: node",
        "          args: [ x ] # one arg",
        "        args: [y]",
        "    b:    *base",
        "agent:",
        "    provider:   echo",
        "",
      ].join("\r\n"),
    );
    expect(servers()).toEqual({ c: ["node", "y"], b: ["node", "x"] });
  });

  it("a copy that itself uses an anchor of an entry kept is written under its alias's line too", () => {
    home = tempHome();
    const config = home.write(
      "config.yaml",
      [
        "mcp_servers:",
        "  z: {command: q, env: &common {K: v}}",
        "  a: &base",
        "    command: node",
        "    env: *common",
        "  b: *base",
        "",
      ].join("\n"),
    );
    expect(removeServer(config, "a")).toBe(true);
    expect(readFileSync(config, "utf8")).toBe(
      [
        "mcp_servers:",
        "  z: {command: q, env: &common {K: v}}",
        "  b: &base",
        "    command: node",
        "    env: *common",
        "",
      ].join("\n"),
    );
  });

  it("anchors on nested nodes: each goes to its first alias, in a flow collection or on a key's line", () => {
    home = tempHome();
    const config = home.write(
      "config.yaml",
      [
        "mcp_servers:",
        "  a:",
        "    command: node",
        "    cwd: &dir /srv/mcp",
        '    env: &env {A: "1", B: two}   # shared',
        "  s: {command: n, args: [--root, *dir]}",
        "  b:",
        "    command: x",
        "    env: *env  # same",
        "  c: {command: y, env: *env}",
        "",
      ].join("\n"),
    );
    expect(removeServer(config, "a")).toBe(true);
    expect(readFileSync(config, "utf8")).toBe(
      [
        "mcp_servers:",
        "  s: {command: n, args: [--root, &dir /srv/mcp]}",
        "  b:",
        "    command: x",
        '    env: &env { A: "1", B: two }  # same',
        "  c: {command: y, env: *env}",
        "",
      ].join("\n"),
    );
    expect(servers()).toEqual({ s: ["n", "--root", "/srv/mcp"], b: ["x"], c: ["y"] });
    const env = (name: string) => loadConfig({ home: home.dir, env: {} }).config.mcp_servers[name]?.env;
    expect([env("b"), env("c")]).toEqual([
      { A: "1", B: "two" },
      { A: "1", B: "two" },
    ]);
  });
});
