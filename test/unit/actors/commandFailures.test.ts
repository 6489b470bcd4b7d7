import { describe, expect, it } from "vitest";
import { commandRunner } from "../../../src/actors/agent/command.js";

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
});
