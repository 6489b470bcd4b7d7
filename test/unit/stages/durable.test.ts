import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import type { ResolvedRoute } from "../../../src/streams/context.js";
import { createPipeline, type PipelineDeps } from "../../../src/streams/pipeline.js";
import { createSeenCache } from "../../../src/streams/seenCache.js";
import { verifySignature } from "../../../src/streams/signatures.js";
import type { Inbound, Outcome } from "../../../src/streams/types.js";

/** docs/durability.md: a 202 leaves only once the state store says the event is durable. */

const route: ResolvedRoute = {
  name: "r",
  route: { deliver: "log", deliver_only: false, mirror_to_session: false },
  secret: "INSECURE_NO_AUTH",
  profile: "default",
};

function deferred() {
  let resolve: () => void = () => {};
  let reject: (err: unknown) => void = () => {};
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

function harness(
  durable: () => Promise<void> | undefined,
  options: { route?: ResolvedRoute; runScript?: PipelineDeps["script"]["runScript"] } = {},
) {
  const served = options.route ?? route;
  const forgotten: string[] = [];
  const withdrawn: string[] = [];
  const kept: string[] = [];
  const seen = createSeenCache({ ttlMs: 3_600_000, maxEntries: 100, now: () => 0 });
  const deps: PipelineDeps = {
    routes: { lookup: (name) => (name === "r" ? served : undefined), multiplexProfiles: () => false },
    maxBodyBytes: () => 1000,
    isSpent: () => false,
    tryAcquire: () => true,
    auth: { verify: verifySignature },
    filters: { listReader: () => ({ readList: () => new Set() }) },
    script: { runScript: options.runScript ?? (async (req) => ({ kind: "payload", payload: req.payload })) },
    idempotency: { checkAndAdd: (k) => seen.checkAndAdd(k), randomId: () => "rnd" },
    dispatch: {
      modes: {},
      enqueueRun: () => true,
      forget: (key) => {
        forgotten.push(key);
        seen.delete(key);
      },
      withdraw: (event) => withdrawn.push(event.deliveryId),
      kept: (event) => kept.push(event.deliveryId),
    },
    deliver: { deliverDirect: async () => true, forget: () => {} },
    onFailure: () => {},
    durable,
  };
  return { pipeline: createPipeline(deps), forgotten, withdrawn, kept };
}

const inbound = (id: string): Inbound => ({
  method: "POST",
  path: "/webhooks/r",
  routeName: "r",
  profile: undefined,
  headers: { "x-request-id": id, "content-type": "application/json" },
  body: Buffer.from("{}"),
  receivedAt: 0,
});

describe("the durability wait after dispatch", () => {
  it("holds the 202 (and a duplicate's 200) until the sync resolves", async () => {
    const sync = deferred();
    let pending: Promise<void> | undefined = sync.promise;
    const { pipeline } = harness(() => pending);
    const answers: Outcome[] = [];
    pipeline.push(inbound("a"), (o) => answers.push(o));
    pipeline.push(inbound("a"), (o) => answers.push(o));
    await Promise.resolve();
    expect(answers).toEqual([]);
    pending = undefined;
    sync.resolve();
    await sync.promise;
    await new Promise((resolve) => setImmediate(resolve));
    expect(answers.map((o) => o.status).sort()).toEqual([200, 202]);
  });

  it("says a 202 is kept once its sync resolves (or at once when none is pending), never one its failed sync 503s", async () => {
    const ok = deferred();
    const bad = deferred();
    let pending: Promise<void> | undefined = ok.promise;
    const { pipeline, kept, withdrawn } = harness(() => pending);
    pipeline.push(inbound("k1"), () => {});
    pending = bad.promise;
    pipeline.push(inbound("k2"), () => {});
    pending = undefined;
    pipeline.push(inbound("k3"), () => {});
    expect(kept).toEqual(["k3"]);
    ok.resolve();
    bad.reject(new Error("ENOSPC"));
    await ok.promise;
    await bad.promise.catch(() => {});
    await new Promise((resolve) => setImmediate(resolve));
    expect(kept).toEqual(["k3", "k1"]);
    expect(withdrawn).toEqual(["k2"]);
  });

  it("answers at once when nothing waits for a sync", async () => {
    const { pipeline } = harness(() => undefined);
    let answer: Outcome | undefined;
    pipeline.push(inbound("b"), (o) => {
      answer = o;
    });
    expect(answer?.status).toBe(202);
  });

  it("each batch's requests are answered when their own sync settles, in the order they came; a failed one 503s only its own", async () => {
    const first = deferred();
    const second = deferred();
    const third = deferred();
    let pending: Promise<void> | undefined = first.promise;
    const { pipeline, forgotten } = harness(() => pending);
    const answered: string[] = [];
    const push = (id: string) => pipeline.push(inbound(id), (o) => answered.push(`${id} ${o.status}`));
    for (const id of ["a1", "a2", "a3"]) push(id);
    pending = second.promise;
    for (const id of ["b1", "b2"]) push(id);
    pending = third.promise;
    push("c1");
    second.resolve();
    await second.promise;
    expect(answered).toEqual(["b1 202", "b2 202"]);
    third.reject(new Error("EIO"));
    await third.promise.catch(() => {});
    expect(answered).toEqual(["b1 202", "b2 202", "c1 503"]);
    expect(forgotten).toEqual(["r:c1"]);
    first.resolve();
    await first.promise;
    expect(answered.slice(3)).toEqual(["a1 202", "a2 202", "a3 202"]);
  });

  it("a stop waits for the requests still waiting for their sync, and answers them", async () => {
    const sync = deferred();
    const { pipeline } = harness(() => sync.promise);
    const answer = pipeline.submit(inbound("s"));
    let closed = false;
    const closing = pipeline.close().then(() => {
      closed = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toBe(false);
    sync.resolve();
    await closing;
    expect((await answer).status).toBe(202);
  });

  it("a failed sync answers 503 (never a 202 that is not kept) and forgets the id so the retry runs", async () => {
    const sync = deferred();
    const { pipeline, forgotten } = harness(() => sync.promise);
    const answer = pipeline.submit(inbound("c"));
    sync.reject(new Error("EIO"));
    // With Retry-After, as every other temporary 503 (queue full, shutting down, Redis unreachable).
    expect(await answer).toEqual({
      status: 503,
      body: { error: "Could not record the event, retry later" },
      headers: { "Retry-After": "30" },
    });
    expect(forgotten).toEqual(["r:c"]);
  });

  it("a failed sync withdraws an accepted agent run's event too, not only a coalesced one (a key that remembered its run forgets it)", async () => {
    const sync = deferred();
    const { pipeline, withdrawn } = harness(() => sync.promise);
    const answer = pipeline.submit(inbound("d"));
    sync.reject(new Error("EIO"));
    expect((await answer).status).toBe(503);
    expect(withdrawn).toEqual(["d"]);
  });

  it("a request waiting for its sync no longer holds its parsed payload, only what its answer needs", async () => {
    setFlagsFromString("--expose-gc");
    const collect = runInNewContext("gc") as () => void;
    // The route's script hands the pipeline a payload of the test's own, to see whether it is still held.
    let held: WeakRef<object> | undefined;
    const sync = deferred();
    const { pipeline } = harness(() => sync.promise, {
      route: { ...route, route: { ...route.route, script: "./script" } },
      runScript: async () => {
        const payload = { body: "x".repeat(100_000) };
        held = new WeakRef(payload);
        return { kind: "payload", payload };
      },
    });
    const answer = pipeline.submit(inbound("w"));
    for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(held).toBeDefined();
    collect();
    expect(held?.deref()).toBeUndefined();
    sync.resolve();
    expect(await answer).toMatchObject({ status: 202, body: { status: "accepted", delivery_id: "w" } });
  });
});
