import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { builtinTools, createWorkspace } from "../../../src/agent/tools/index.js";
import { terminalTool } from "../../../src/agent/tools/terminal.js";
import type { AgentTool } from "../../../src/agent/tools/tool.js";
import { toolsSchema } from "../../../src/config/sections/tools.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { pidInFile, signalProcess } from "../../helpers/process.js";
import { outcomeText, toolContext } from "../../helpers/toolContext.js";

let home: TempHome;
let workspace: string;
beforeEach(async () => {
  home = tempHome();
  workspace = await createWorkspace(home.dir, "d-1");
});
afterEach(() => home.cleanup());

const env = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  WEBHOOK_SECRET: "whsec-123",
  OPENAI_API_KEY: "sk-456",
};
const settings = { timeout_seconds: 10, max_output_bytes: 64 * 1024 };
const run = (command: string, over: Partial<typeof settings> = {}) =>
  terminalTool({ ...settings, ...over }, { env }).execute(
    { command },
    toolContext({ workspace: async () => workspace }),
  );

describe("terminal", () => {
  it("runs the command with bash -c in the run's workspace and reports exit code, stdout, stderr", async () => {
    const text = outcomeText(await run("echo hi > made.txt; cat made.txt; pwd; echo oops >&2; exit 3"));
    expect(text).toBe(`exit code 3\n--- stdout ---\nhi\n${workspace}\n\n--- stderr ---\noops\n`);
  });

  it("gives the command no secrets of svc's environment, and HOME is the workspace", async () => {
    const text = outcomeText(await run("env"));
    expect(text).not.toMatch(/whsec-123|sk-456|WEBHOOK_SECRET|OPENAI_API_KEY/);
    expect(text).toContain(`HOME=${workspace}`);
  });

  it("says a command too long for one argument to bash -c is, without quoting it back", async () => {
    const command = `echo ${"x".repeat(200_000)}`;
    expect(await run(command)).toEqual({
      ok: false,
      error:
        "terminal: the command is 200005 bytes, more than the system lets one argument (bash -c) have (E2BIG) — " +
        "write a long script to a file in parts (cat >> script.sh <<'EOF' … EOF, one call each) and run it with bash script.sh",
    });
  });

  it("cuts output past max_output_bytes and says how much was dropped", async () => {
    const text = outcomeText(await run("head -c 5000 /dev/zero | tr '\\0' a", { max_output_bytes: 1000 }));
    expect(text).toBe(`exit code 0\n--- stdout ---\n${"a".repeat(1000)}\n[4000 more bytes not shown]`);
  });

  it("cuts on a whole character: a multi-byte character split by the cap is left out and counted", async () => {
    // "é" is 2 bytes: 1000 bytes of "aé..." end halfway through one.
    const text = outcomeText(
      await run("printf 'a'; for i in $(seq 600); do printf '\\303\\251'; done", { max_output_bytes: 1000 }),
    );
    expect(text).toBe(`exit code 0\n--- stdout ---\na${"é".repeat(499)}\n[202 more bytes not shown]`);
  });

  it("stops a command that runs past the timeout", async () => {
    const outcome = await run("echo started; sleep 30", { timeout_seconds: 1 });
    // What the command printed before the timeout comes with the error (if bash got that far).
    expect(outcome).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^terminal: timed out after 1 s(\n--- stdout ---\nstarted\n)?$/),
    });
  });

  it("answers when the command exits, though a process it moved out of its group (setsid) still holds stdout", async () => {
    // The escaped process outlives the group's kill and keeps the pipe open; without the pipes closed after
    // the command's exit the call waited for it (here 600 s), past timeout_seconds.
    const pidFile = join(workspace, "escaped.pid");
    try {
      const text = outcomeText(await run("setsid sleep 600 & echo $! > escaped.pid; echo launched"));
      expect(text).toBe("exit code 0\n--- stdout ---\nlaunched\n");
    } finally {
      if (existsSync(pidFile)) signalProcess(await pidInFile(pidFile), "SIGKILL");
    }
  });

  it("stops the command when the run is canceled", async () => {
    const controller = new AbortController();
    const pending = terminalTool(settings, { env }).execute(
      { command: "sleep 30" },
      toolContext({ workspace: async () => workspace, signal: controller.signal }),
    );
    controller.abort();
    expect(await pending).toEqual({ ok: false, error: "terminal: canceled: the run ended" });
  });

  it("runs a turn's workspace calls (terminal, file) one after another, in the order asked", async () => {
    const tools = new Map(
      builtinTools(["terminal", "file"], toolsSchema.parse({}), { env }).map((t) => [t.name, t]),
    );
    const context = toolContext({ workspace: async () => workspace });
    const call = (name: string, args: unknown) => (tools.get(name) as AgentTool).execute(args, context);
    execFileSync("mkfifo", [join(workspace, "gate")]);
    const finished: string[] = [];
    // The first command waits until the test writes to the FIFO; run at once, the later calls would end first.
    const first = call("terminal", { command: "cat gate > got.txt" });
    const second = call("file_read", { path: "got.txt" });
    const third = call("terminal", { command: "cat got.txt" });
    void first.then(() => finished.push("first"));
    void second.then(() => finished.push("second"));
    void third.then(() => finished.push("third"));
    await writeFile(join(workspace, "gate"), "opened");
    expect(outcomeText(await second)).toBe("opened");
    expect(outcomeText(await third)).toBe("exit code 0\n--- stdout ---\nopened");
    expect(finished).toEqual(["first", "second", "third"]);
  });

  it("does not start a workspace call that was waiting when the run ended", async () => {
    const controller = new AbortController();
    const tools = new Map(
      builtinTools(["terminal", "file"], toolsSchema.parse({}), { env }).map((t) => [t.name, t]),
    );
    const context = toolContext({ workspace: async () => workspace, signal: controller.signal });
    const running = (tools.get("terminal") as AgentTool).execute({ command: "sleep 30" }, context);
    const waiting = (tools.get("file_write") as AgentTool).execute(
      { path: "late.txt", content: "x" },
      context,
    );
    controller.abort();
    expect(await running).toEqual({ ok: false, error: "terminal: canceled: the run ended" });
    expect(await waiting).toEqual({ ok: false, error: "file_write: canceled: the run ended" });
    expect(existsSync(join(workspace, "late.txt"))).toBe(false);
  });
});
