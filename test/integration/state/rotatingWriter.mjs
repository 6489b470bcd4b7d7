/**
 * A child process for the SIGKILL-during-rotation test: a `local` state store in argv[2] with 32 KB
 * segments and 3,000 live idempotency keys (so each snapshot takes several slices), accepting runs from 16
 * concurrent writers as fast as they become durable and printing `ack <delivery id>` for each once
 * durable() resolved. Three runs in four then finish (as the run queue would record them), so the live
 * state stays about the same size and rotations keep coming; every fourth (`d0`, `d4`, …) stays pending.
 * Runs until killed. `node rotatingWriter.mjs <dir> <path of svc's state/localStore module> [<path of its
 * streams/seenCache module>]` (test/helpers/cliEntry.ts: svcModule). With the third, the store keeps its keys
 * in a seen-ids cache from after the first 3,000 on, and each run's key is taken there first, as a gateway does.
 */
const [dir, localStore, seenCacheModule] = process.argv.slice(2);
const { LocalStateStore } = await import(localStore);
const store = new LocalStateStore({ dir, now: Date.now, maxSegmentBytes: 32 * 1024 });
const now = Date.now();
for (let i = 0; i < 3000; i++) store.remember(`pr:seen-${i}`, now);
await store.durable();
let cache;
if (seenCacheModule !== undefined) {
  const { createSeenCache } = await import(seenCacheModule);
  cache = createSeenCache({ ttlMs: 60 * 60 * 1000, maxEntries: 100_000, now: Date.now });
  store.shareSeen(cache.journaled);
}

/** A pending run (io/stores/pendingRuns.ts: PendingRun). */
const run = (id) => ({
  profile: "default",
  routeName: "pr",
  event: "pull_request",
  deliveryId: id,
  prompt: `PR ${id} ${"x".repeat(200)}`,
  extra: {},
  receivedAt: Date.now(),
});

let next = 0;
const writer = async () => {
  for (;;) {
    const id = `d${next++}`;
    cache?.checkAndAdd(`pr:${id}`);
    store.runAccepted(run(id), Date.now());
    await store.durable();
    process.stdout.write(`ack ${id}\n`);
    if (Number(id.slice(1)) % 4 !== 0) store.runFinished("pr", id);
  }
};
process.stdout.write("ready\n");
await Promise.all(Array.from({ length: 16 }, writer));
