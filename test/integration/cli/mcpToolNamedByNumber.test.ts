import { resolve } from "node:path";
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
