import { describe, expect, it } from "vitest";
import { NOT_RUN, type QueuedRun, type RunExecutor } from "../../src/actors/runs.js";
import { RunKeptForRestart } from "../../src/errors.js";
import { timedRun, timedRuns } from "../../src/gateway/runMetrics.js";
import type { GatewayMetrics } from "../../src/io/metrics/gatewayMetrics.js";

/** The metrics a run reports, and its end as the delivery history records it. */
function observed() {
  const finished: string[] = [];
  const ends: unknown[] = [];
  const metrics = { runFinished: (outcome: string) => finished.push(outcome) } as unknown as GatewayMetrics;
  return { finished, ends, metrics, onEnd: (err: unknown) => ends.push(err ?? "ok") };
}

describe("timedRun", () => {
  it("a run that ran is counted and ended ok or failed; one dropped before it ran (NOT_RUN) is neither", async () => {
    const o = observed();
    await timedRun(
      o.metrics,
      () => 0,
      async () => undefined,
      o.onEnd,
    );
    await expect(
      timedRun(
        o.metrics,
        () => 0,
        () => Promise.reject(new Error("boom")),
        o.onEnd,
      ),
    ).rejects.toThrow("boom");
    // A fired cron job paused while its event waited: dropped and logged, no run to count or record.
    await expect(
      timedRun(
        o.metrics,
        () => 0,
        async () => NOT_RUN,
        o.onEnd,
      ),
    ).resolves.toBe(NOT_RUN);
    expect(o.finished).toEqual(["ok", "failed"]);
    expect(o.ends).toEqual(["ok", expect.objectContaining({ message: "boom" })]);
  });

  it("a run the gateway's stop cut short (it threw, its signal aborted) is neither counted nor ended: it is saved and runs again", async () => {
    const o = observed();
    const stop = new AbortController();
    const failing = timedRun(
      o.metrics,
      () => 0,
      () =>
        new Promise<never>((_resolve, reject) =>
          stop.signal.addEventListener("abort", () => reject(new Error("agent command canceled"))),
        ),
      o.onEnd,
      stop.signal,
    );
    stop.abort();
    await expect(failing).rejects.toThrow("agent command canceled");
    expect(o.finished).toEqual([]);
    expect(o.ends).toEqual([]);
  });

  it("a run that ended as the stop came (returned, its signal aborted) is counted and ended ok, as the journal finishes it", async () => {
    const o = observed();
    const stop = new AbortController();
    stop.abort();
    // A mail some recipients got, its retry for the others cut short by the stop: the run ended there.
    await timedRun(
      o.metrics,
      () => 0,
      async () => undefined,
      o.onEnd,
      stop.signal,
    );
    expect(o.finished).toEqual(["ok"]);
    expect(o.ends).toEqual(["ok"]);
  });
});

describe("timedRuns (timedRun made once around every run)", () => {
  const run = (deliveryId: string) => ({ routeName: "pr", deliveryId }) as unknown as QueuedRun;

  it("counts and ends each run as timedRun does, with the run it ended, and leaves one the stop cut short alone", async () => {
    const finished: string[] = [];
    const ends: [string, unknown][] = [];
    const metrics = { runFinished: (outcome: string) => finished.push(outcome) } as unknown as GatewayMetrics;
    const execute: RunExecutor = async (r) => {
      if (r.deliveryId === "boom") throw new Error("boom");
      if (r.deliveryId === "kept") throw new RunKeptForRestart("kept");
      if (r.deliveryId === "dropped") return NOT_RUN;
      return undefined;
    };
    const timed = timedRuns(
      metrics,
      () => 0,
      execute,
      (r, err) => ends.push([r.deliveryId, err ?? "ok"]),
    );
    const live = new AbortController().signal;
    await timed(run("a"), live);
    await expect(timed(run("boom"), live)).rejects.toThrow("boom");
    await expect(timed(run("kept"), live)).rejects.toThrow("kept");
    await expect(timed(run("dropped"), live)).resolves.toBe(NOT_RUN);
    const stopped = new AbortController();
    stopped.abort();
    // Cut short by the stop (it threw): saved to run again, neither counted nor ended.
    await expect(timed(run("boom"), stopped.signal)).rejects.toThrow("boom");
    // Ended as the stop came (it returned): finished in the journal, so counted and ended too.
    await timed(run("b"), stopped.signal);
    expect(finished).toEqual(["ok", "failed", "ok"]);
    expect(ends).toEqual([
      ["a", "ok"],
      ["boom", expect.objectContaining({ message: "boom" })],
      ["b", "ok"],
    ]);
  });

  it("with neither metrics nor an end to record, is the executor itself", () => {
    const execute: RunExecutor = async () => undefined;
    expect(timedRuns(undefined, () => 0, execute)).toBe(execute);
  });
});
