import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

/**
 * `svc mcp remove` of an entry whose anchor another entry uses rewrote the whole config.yaml in the yaml
 * library's layout (two-space indents, `[ y ]`, one space before every comment): only the entry removed and
 * the alias that takes the anchored copy change now.
 */

let home: TempHome;
afterEach(() => home.cleanup());

describe("svc mcp remove of an entry another entry aliases", { timeout: 60_000 }, () => {
  it("keeps the layout of the rest of the file: the first alias holds the copy, the second still points at it", async () => {
    home = tempHome();
    const config = home.write(
      "config.yaml",
      [
        "# MCP servers of this host",
        "mcp_servers:",
        "    a: &base   # the shared runner",
        "        command: node",
        "        args:   [x]",
        "",
        "    b:     *base      # same as a",
        "    c:",
        "        <<:  *base",
        "        args: [y]     # its own",
        "",
        "agent:",
        "    provider: echo    # for tests",
        "",
      ].join("\n"),
    );
    const removed = await svc(home, ["mcp", "remove", "a"]);
    expect(removed.stderr).toBe("");
    expect(removed.code).toBe(0);
    expect(readFileSync(config, "utf8")).toBe(
      [
        "# MCP servers of this host",
        "mcp_servers:",
        "    b:     &base      # same as a",
        "      command: node",
        "      args: [ x ]",
        "    c:",
        "        <<:  *base",
        "        args: [y]     # its own",
        "",
        "agent:",
        "    provider: echo    # for tests",
        "",
      ].join("\n"),
    );
  });
});

const NAMED_TOOLS = await bundledFixture(
  resolve(import.meta.dirname, "../../fixtures/mcp/named-tools-server.mjs"),
);

/** The server's own names of the tools `svc mcp tools <name>` lists, sorted; the command must exit 0. */
async function listed(name: string): Promise<string[]> {
  const result = await svc(home, ["mcp", "tools", name]);
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  return [...result.stdout.matchAll(/^mcp__\w+ +(\S+)/gm)].map((m) => m[1] as string).sort();
}

/**
 * An entry that merges another (`two: {<<: *srv}`) takes the copy of the entry removed or replaced under its
 * merge key (`two: {<<: &srv {...}}`): what that copy holds is read as written under two itself, so an
 * allowlist `include: Null` stays the tool Null (not the key left unset, every tool), and an argument 3.10 and
 * an env value 0755 stay that text.
 */
describe("svc mcp remove or add --force of an entry another entry merges", { timeout: 60_000 }, () => {
  const config = () => [
    "mcp_servers:",
    `  one: &srv {command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(NAMED_TOOLS)}, "Null", search, delete_all, 3.10], env: {UMASK: 0755}, tools: {include: Null}}`,
    "  two: {<<: *srv}",
    "",
  ];

  it("remove: the entry left keeps the allowlist of one, its argument 3.10 and its env 0755", async () => {
    home = tempHome();
    const file = home.write("config.yaml", config().join("\n"));
    expect(await listed("two")).toEqual(["Null"]);
    const removed = await svc(home, ["mcp", "rm", "one"]);
    expect(removed.code).toBe(0);
    const text = readFileSync(file, "utf8");
    expect(text).not.toContain("one:");
    expect(text).toMatch(/<<:\s*&srv/);
    const check = await svc(home, ["config", "check"]);
    expect(check.code).toBe(0);
    expect(check.stdout).toMatch(/^ok: .* 1 MCP server,/);
    expect(await listed("two")).toEqual(["Null"]);
    const two = loadConfig({ home: home.dir, env: {} }).config.mcp_servers.two;
    expect(two?.args).toEqual([NAMED_TOOLS, "Null", "search", "delete_all", "3.10"]);
    expect(two?.env).toEqual({ UMASK: "0755" });
  });

  it("add --force: the entry that merged the one replaced keeps its allowlist", async () => {
    home = tempHome();
    home.write("config.yaml", config().join("\n"));
    const added = await svc(home, [
      "mcp",
      "add",
      "one",
      "--force",
      "--",
      process.execPath,
      NAMED_TOOLS,
      "other",
    ]);
    expect(added.code).toBe(0);
    expect(await listed("one")).toEqual(["other"]);
    expect(await listed("two")).toEqual(["Null"]);
  });
});
