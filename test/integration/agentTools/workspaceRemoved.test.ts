import { statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runContext } from "../../../src/agent/runTools.js";
import { builtinTools } from "../../../src/agent/tools/index.js";
import type { AgentTool } from "../../../src/agent/tools/tool.js";
import { toolsSchema } from "../../../src/config/sections/tools.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { outcomeText } from "../../helpers/toolContext.js";

let home: TempHome;
beforeEach(() => {
  home = tempHome();
});
afterEach(() => home.cleanup());

describe("a run whose command removed its own workspace (rm -rf ~: HOME is the workspace)", () => {
  it("gets it back, empty and private, for its next terminal and file calls", async () => {
    const context = runContext(
      { workspacesDir: join(home.dir, "workspaces") },
      { route: "ci", event: "push", deliveryId: "d-1", prompt: "", toolsets: [], profile: undefined },
      new AbortController().signal,
    );
    const tools = builtinTools(["terminal", "file"], toolsSchema.parse({}), {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    });
    const call = (name: string, args: unknown) =>
      (tools.find((tool) => tool.name === name) as AgentTool).execute(args, context);

    expect(outcomeText(await call("terminal", { command: 'rm -rf "$HOME" && echo cleaned' }))).toBe(
      "exit code 0\n--- stdout ---\ncleaned\n",
    );
    expect(outcomeText(await call("terminal", { command: "pwd" }))).toBe(
      `exit code 0\n--- stdout ---\n${await context.workspace()}\n`,
    );
    expect(statSync(await context.workspace()).mode & 0o777).toBe(0o700);
    await call("terminal", { command: 'rm -rf "$HOME"' });
    expect(outcomeText(await call("file_write", { path: "a.txt", content: "x" }))).toBe(
      "wrote 1 bytes to a.txt",
    );
    await call("terminal", { command: 'rm -rf "$HOME"' });
    expect(outcomeText(await call("file_list", {}))).toBe("(empty)");
  });
});
