import { describe, expect, it } from "vitest";
import { SimulatedClock } from "xstate";
import { createCoalescer } from "../../../src/actors/coalescer.js";
import type { ResolvedRoute } from "../../../src/streams/context.js";
import { createPipeline, type PipelineDeps } from "../../../src/streams/pipeline.js";
import { createSeenCache } from "../../../src/streams/seenCache.js";
import { verifySignature } from "../../../src/streams/signatures.js";
import type { Inbound } from "../../../src/streams/types.js";
import { captureLogger } from "../../fakes/logCapture.js";

/**
 * docs/coalescing-and-cron.md: a retired event run at once whose record then fails to be written gives its key
 * the memory its run replaced. Over the real pipeline, coalescer and durable stage.
 */

/** Route sl, retired by a reload (its events in its script then run at once), coalescing by `id`. */
const route: ResolvedRoute = {
  name: "sl",
  route: {
    deliver: "log",
    deliver_only: false,
    mirror_to_session: false,
    prompt: "sl {v}",
    coalesce: { key: "id", window_seconds: 5, max_wait_seconds: 300 },
  } as ResolvedRoute["route"],
  secret: "INSECURE_NO_AUTH",
  profile: "default",
  standing: { retired: true },
};

const inbound = (id: string, v: string, receivedAt: number): Inbound => ({
  method: "POST",
  path: "/webhooks/sl",
  routeName: "sl",
  profile: undefined,
  headers: { "x-request-id": id, "content-type": "application/json" },
  body: Buffer.from(JSON.stringify({ id: 7, v })),
  receivedAt,
});

describe("two retired runs of a key whose records fail in one journal batch", () => {
  it("are both withdrawn: an older event of the key, through its script after them, runs (superseded by neither)", async () => {
    const clock = new SimulatedClock();
    clock.increment(10_000);
    const log = captureLogger();
    const coalescer = createCoalescer({
      dispatch: () => {},
      clock,
      elapsed: () => clock.now(),
      logger: log.logger,
    });
    const seen = createSeenCache({ ttlMs: 3_600_000, maxEntries: 100, now: () => 0 });
    const queued: string[] = [];
    let batch: { promise: Promise<void>; reject: (err: unknown) => void } | undefined;
    batch = (() => {
      let reject: (err: unknown) => void = () => {};
      const promise = new Promise<void>((_, rej) => {
        reject = rej;
      });
      return { promise, reject };
    })();
    let waiting = 0;
    let bothWaiting: () => void = () => {};
    const bothInBatch = new Promise<void>((resolve) => {
      bothWaiting = resolve;
    });
    const deps: PipelineDeps = {
      routes: { lookup: (name) => (name === "sl" ? route : undefined), multiplexProfiles: () => false },
      maxBodyBytes: () => 100_000,
      isSpent: () => false,
      tryAcquire: () => true,
      auth: { verify: verifySignature },
      filters: { listReader: () => ({ readList: () => new Set() }) },
      script: { runScript: async (req) => ({ kind: "payload", payload: req.payload }) },
      idempotency: { checkAndAdd: (k) => seen.checkAndAdd(k), randomId: () => "rnd" },
      dispatch: {
        reloadFlushesGroups: true,
        modes: {
          coalesceRetired: (event) => coalescer.offerRetired(event),
          retiredQueued: (event) => coalescer.retiredQueued(event),
        },
        enqueueRun: (event) => {
          queued.push(event.deliveryId);
          return true;
        },
        forget: (key) => seen.delete(key),
        withdraw: (event) => coalescer.withdraw(event),
      },
      deliver: { deliverDirect: async () => true, forget: () => {} },
      onFailure: () => {},
      durable: () => {
        if (batch === undefined) return undefined;
        waiting += 1;
        if (waiting === 2) bothWaiting();
        return batch.promise;
      },
    };
    const pipeline = createPipeline(deps);
    // R1 (received at 2 s) and R2 (at 3 s), key 7, run at once and wait for the same batch.
    const r1 = pipeline.submit(inbound("R1", "mid", 2_000));
    const r2 = pipeline.submit(inbound("R2", "new", 3_000));
    await bothInBatch;
    expect(queued).toEqual(["R1", "R2"]);
    batch.reject(new Error("ENOSPC: no space left on device"));
    expect((await r1).status).toBe(503);
    expect((await r2).status).toBe(503);
    // Room again. A, received before both, through its script after them: neither ran, so it runs.
    batch = undefined;
    const a = await pipeline.submit(inbound("A", "old", 1_000));
    expect(a.status).toBe(202);
    expect(a.body).toMatchObject({ status: "accepted" });
    expect(queued).toEqual(["R1", "R2", "A"]);
    expect(log.messages().filter((msg) => msg.includes("superseded"))).toEqual([]);
    // A's run is the key's memory now: one received before it is superseded by A's, not by R1's or R2's.
    const s = await pipeline.submit(inbound("S", "older", 500));
    expect(s).toMatchObject({ status: 202, reason: "superseded by a run already dispatched (A)" });
    await pipeline.close();
  });
});
