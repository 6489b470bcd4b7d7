import { describe, expect, it } from "vitest";
import { NOT_RUN } from "../../src/actors/runs.js";
import { timedRun } from "../../src/gateway/runMetrics.js";
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

  it("a run the gateway's stop ended (its signal aborted) is neither counted nor ended: it is saved and runs again", async () => {
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
    // An agent that answers the stop's SIGTERM with a reply and exit 0: its run is saved all the same.
    await timedRun(
      o.metrics,
      () => 0,
      async () => "reply",
      o.onEnd,
      stop.signal,
    );
    expect(o.finished).toEqual([]);
    expect(o.ends).toEqual([]);
  });
});
