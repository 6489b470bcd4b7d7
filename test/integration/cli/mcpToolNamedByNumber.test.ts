import { join, resolve } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

const NAMED_TOOLS = await bundledFixture(
  resolve(import.meta.dirname, "../../fixtures/mcp/named-tools-server.mjs"),
);

let home: TempHome;
beforeEach(() => {
  home = tempHome();
});
afterEach(() => home.cleanup());

/**
 * A tool named by a number or a word YAML reads as a boolean, written unquoted in tools.include / exclude:
 * the name is the text written (`3.10`, not the number 3.1), as an argument's is.
 */
it("tools.include and tools.exclude written with unquoted numbers and booleans name the tools of that text", {
  timeout: 60_000,
}, async () => {
  const tools = ["2024", "3.10", "3.1", "True", "true", "7", "other"];
  home.write(
    "config.yaml",
    [
      "mcp_servers:",
      "  inc:",
      `    command: ${JSON.stringify(process.execPath)}`,
      `    args: [${JSON.stringify(NAMED_TOOLS)}, ${tools.map((t) => JSON.stringify(t)).join(", ")}]`,
      "    tools: {include: [2024, 3.10, True]}",
      "  exc:",
      `    command: ${JSON.stringify(process.execPath)}`,
      `    args: [${JSON.stringify(NAMED_TOOLS)}, ${tools.map((t) => JSON.stringify(t)).join(", ")}]`,
      "    tools:",
      "      exclude: 7",
      "",
    ].join("\n"),
  );
  const check = await svc(home, ["config", "check"]);
  expect(check.code).toBe(0);
  expect(check.stdout).toMatch(/^ok: .* 2 MCP servers,/);
  const included = await svc(home, ["mcp", "tools", "inc"]);
  expect(included.code).toBe(0);
  expect(serverTools(included.stdout)).toEqual(["2024", "3.10", "True"]);
  const excluded = await svc(home, ["mcp", "tools", "exc"]);
  expect(excluded.code).toBe(0);
  expect(serverTools(excluded.stdout)).toEqual(["2024", "3.10", "3.1", "True", "true", "other"]);
});

/** The server's own names of the tools `svc mcp tools` lists (its second column), in its order. */
function serverTools(stdout: string): string[] {
  return [...stdout.matchAll(/^mcp__\w+ +(\S+)/gm)].map((m) => m[1] as string);
}

it("a Null written unquoted in a tool list names the tool Null; an entry left empty or written ~ is refused with the fix", {
  timeout: 60_000,
}, async () => {
  const tools = ["Null", "null", "7", "other"];
  const server = (name: string, filter: string) => [
    `  ${name}:`,
    `    command: ${JSON.stringify(process.execPath)}`,
    `    args: [${JSON.stringify(NAMED_TOOLS)}, ${tools.map((t) => JSON.stringify(t)).join(", ")}]`,
    `    tools: ${filter}`,
  ];
  home.write("config.yaml", ["mcp_servers:", ...server("inc", "{include: [Null, 7]}"), ""].join("\n"));
  const check = await svc(home, ["config", "check"]);
  expect(check.code).toBe(0);
  expect(check.stdout).toMatch(/^ok: .* 1 MCP server,/);
  const included = await svc(home, ["mcp", "tools", "inc"]);
  expect(included.code).toBe(0);
  expect(serverTools(included.stdout).sort()).toEqual(["7", "Null"]);

  home.write(
    "config.yaml",
    [
      "mcp_servers:",
      ...server("a", "{include: [~]}"),
      ...server("b", "{exclude: [other, ~, 7]}"),
      ...server("c", "\n      include:\n        - Null\n        -\n        - ~"),
      "",
    ].join("\n"),
  );
  const refused = await svc(home, ["config", "check"]);
  expect(refused.code).toBe(1);
  const file = join(home.dir, "config.yaml");
  expect(refused.stderr.trimEnd().split("\n")).toEqual([
    `${file}: mcp_servers.a.tools.include: expected a tool name, a glob, or a list of them, got [null] — an entry left empty or written ~ (null to YAML) names no tool: remove it, or put '~' in quotes if it is meant as text`,
    `${file}: mcp_servers.b.tools.exclude: expected a tool name, a glob, or a list of them, got ["other",null,"7"] — an entry left empty or written ~ (null to YAML) names no tool: remove it, or put '~' in quotes if it is meant as text`,
    `${file}: mcp_servers.c.tools.include: expected a tool name, a glob, or a list of them, got ["Null",null,null] — 2 entries left empty or written ~ (null to YAML) name no tool: remove them, or put '~' in quotes if it is meant as text`,
  ]);
});

/**
 * The lines of the mcp_servers entry `name`: the named-tools server serving `tools`, with `filter` (one
 * line, such as `include: Null`) under its `tools:`.
 */
function filteredServer(name: string, tools: readonly string[], filter: string): string[] {
  return [
    `  ${name}:`,
    `    command: ${JSON.stringify(process.execPath)}`,
    `    args: [${JSON.stringify(NAMED_TOOLS)}, ${tools.map((t) => JSON.stringify(t)).join(", ")}]`,
    "    tools:",
    `      ${filter}`,
  ];
}

/** The server's own names of the tools `svc mcp tools <name>` lists, sorted; the command must exit 0. */
async function listed(name: string): Promise<string[]> {
  const result = await svc(home, ["mcp", "tools", name]);
  expect(result.code).toBe(0);
  return serverTools(result.stdout).sort();
}

it("include: Null or exclude: Null alone names the tool Null, not the key left unset; include: and include: ~ stay unset", {
  timeout: 60_000,
}, async () => {
  const tools = ["Null", "True", "delete_all"];
  const server = (name: string, filter: string) => filteredServer(name, tools, filter);
  home.write(
    "config.yaml",
    [
      "mcp_servers:",
      ...server("n", "include: Null"),
      ...server("t", "include: True"),
      ...server("x", "exclude: Null"),
      ...server("e", "include:"),
      ...server("s", "include: ~"),
      "",
    ].join("\n"),
  );
  const check = await svc(home, ["config", "check"]);
  expect(check.code).toBe(0);
  expect(await listed("n")).toEqual(["Null"]);
  expect(await listed("t")).toEqual(["True"]);
  expect(await listed("x")).toEqual(["True", "delete_all"]);
  expect(await listed("e")).toEqual(["Null", "True", "delete_all"]);
  expect(await listed("s")).toEqual(["Null", "True", "delete_all"]);
});

it("a value alone written null (what a YAML serializer writes), or tagged !!null, is the key left unset; NULL names the tool NULL; null in a list names the tool null", {
  timeout: 60_000,
}, async () => {
  const tools = ["search", "delete_all", "null", "NULL"];
  const server = (name: string, filter: string) => filteredServer(name, tools, filter);
  home.write(
    "config.yaml",
    [
      "mcp_servers:",
      ...server("i", "include: null"),
      ...server("x", "exclude: null"),
      ...server("g", "include: !!null Null"),
      ...server("u", "include: NULL"),
      ...server("l", "include: [null]"),
      "",
    ].join("\n"),
  );
  const check = await svc(home, ["config", "check"]);
  expect(check.code).toBe(0);
  const all = [...tools].sort();
  expect(await listed("i")).toEqual(all);
  expect(await listed("x")).toEqual(all);
  expect(await listed("g")).toEqual(all);
  expect(await listed("u")).toEqual(["NULL"]);
  expect(await listed("l")).toEqual(["null"]);
});
