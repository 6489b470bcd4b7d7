import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { commandRunner } from "../../../src/actors/agent/command.js";
import { tempHome } from "../../helpers/home.js";

/** Why a failed `command` agent run failed, as the log, the delivery history and the run journal name it. */
describe("a command agent that fails", () => {
  const failure = async (script: string, timeoutMs = 10_000, argv = ["sh", "-c", script]) => {
    const runner = commandRunner({ argv, timeoutMs });
    const request = {
      route: "crash-probe",
      event: "push",
      deliveryId: "d-crash-1",
      prompt: "p",
      toolsets: [],
      profile: undefined,
    };
    return runner.run(request, new AbortController().signal).then(
      () => "no failure",
      (err: Error) => err.message,
    );
  };

  it("killed by a signal: names the signal once, not execa's sentence after svc's prefix", async () => {
    expect(await failure("cat >/dev/null; kill -9 $$")).toBe(
      "agent command was killed by SIGKILL (Forced termination)",
    );
  });

  it("exiting non-zero: names the code and the last lines of stderr", async () => {
    expect(await failure("cat >/dev/null; echo 'crash-probe exploded' >&2; exit 7")).toBe(
      "agent command exited with code 7: crash-probe exploded",
    );
  });

  it("a Node.js script that throws: names its error, not the stack's last frames and Node's version line", async () => {
    const home = tempHome();
    try {
      const script = home.write(
        "agent.mjs",
        [
          'let prompt = ""; for await (const chunk of process.stdin) prompt += chunk;',
          'function connect() { throw new Error("ANTHROPIC_API_KEY is not set: export it before starting the agent"); }',
          "connect();",
          "",
        ].join("\n"),
      );
      const message = await failure("", 10_000, [process.execPath, script]);
      // Node prints where it threw, the error, a blank line, its stack and `Node.js v20...`: the error and
      // the stack's first frame are quoted, blank lines and the version line left out.
      expect(message).toMatch(
        /^agent command exited with code 1: file:\/\/\S+agent\.mjs:2 \| function connect\(\) .* \| +\^ \| Error: ANTHROPIC_API_KEY is not set: export it before starting the agent \| +at connect \(file:\/\/\S+agent\.mjs:2:\d+\)$/,
      );
    } finally {
      home.cleanup();
    }
  });

  it("passing agent.timeout_seconds: names the setting and its value, as a model run's timeout does", async () => {
    expect(await failure("exec sleep 30", 500)).toBe(
      "agent command was stopped: the run took longer than agent.timeout_seconds (0.5 s)",
    );
  });

  it("that cannot be started: one line saying so and why, not execa's two-line sentence", async () => {
    const missing = "/nonexistent-crash-probe-dir/agent";
    expect(await failure("", 10_000, [missing])).toBe(
      `agent command could not be started (spawn ${missing} ENOENT)`,
    );
  });

  it("a script whose #! line cannot be followed: names the interpreter it lacks, or the Windows line ending, not ENOENT", async () => {
    const dir = mkdtempSync(join(tmpdir(), "svc-agent-script-"));
    try {
      const crlf = join(dir, "crlf.sh");
      writeFileSync(crlf, "#!/bin/sh\r\necho hi\r\n", { mode: 0o755 });
      expect(await failure("", 10_000, [crlf])).toBe(
        `agent command could not be started (${crlf} exists, but its first line ends with a carriage return (the file was saved with Windows line endings), so the system looks for an interpreter named "/bin/sh\\r" — save it with Unix line endings (dos2unix ${crlf}))`,
      );
      const moved = join(dir, "moved.sh");
      writeFileSync(moved, "#!/opt/nowhere/bin/python9\nprint(1)\n");
      chmodSync(moved, 0o755);
      expect(await failure("", 10_000, [moved])).toBe(
        `agent command could not be started (${moved} exists, but the interpreter its #! line names, /opt/nowhere/bin/python9, is not on this machine — install it, or correct the #! line (#!/usr/bin/env <name> finds it on PATH))`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
