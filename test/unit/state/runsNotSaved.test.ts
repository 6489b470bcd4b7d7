import { describe, expect, it } from "vitest";
import type { QueuedRun } from "../../../src/actors/runs.js";
import { pipelineLogHooks } from "../../../src/gateway/logHooks.js";
import { captureLogger } from "../../fakes/logCapture.js";

const runs = [{ routeName: "pr" }, { routeName: "pr" }, { routeName: "ci" }] as unknown as QueuedRun[];
const FILE = "/home/me/.svc/webhook-pending-runs.json";
const ENOSPC = new Error("ENOSPC: no space left on device, write");
const levelOf = (line: string) => (JSON.parse(line) as { level: number }).level;

describe("unfinished runs that a stop could not save to webhook-pending-runs.json (a full disk)", () => {
  it("with the local journal, a warning says the journal keeps them and they run at the next start", () => {
    const log = captureLogger();
    pipelineLogHooks(log.logger).onRunsLost(runs, FILE, ENOSPC, "/home/me/.svc/state");
    expect(log.messages()).toEqual([
      `[webhook] 3 agent run(s) not finished at shutdown could not be saved to ${FILE} (pr: 2, ci: 1); the journal (/home/me/.svc/state) keeps them, so they run at the next start`,
    ]);
    const error = captureLogger();
    pipelineLogHooks(error.logger).onRunsLost(runs, FILE, ENOSPC);
    expect(levelOf(log.lines()[0] as string)).toBeLessThan(levelOf(error.lines()[0] as string));
  });

  it("without it, an error says they are lost", () => {
    const log = captureLogger();
    pipelineLogHooks(log.logger).onRunsLost(runs, FILE, ENOSPC);
    expect(log.messages()).toEqual([
      `[webhook] 3 agent run(s) not finished at shutdown could not be saved to ${FILE} (pr: 2, ci: 1) — they are lost; their senders must send them again`,
    ]);
  });
});
