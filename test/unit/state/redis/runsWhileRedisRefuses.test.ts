import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { QueuedRun } from "../../../../src/actors/runs.js";
import { jobIdOf } from "../../../../src/io/state/redis/sharedQueue.js";
import type { RedisState } from "../../../../src/state/redisState.js";
import type { AcceptedEvent, ResolvedRoute } from "../../../../src/streams/context.js";
import { captureLogger } from "../../../fakes/logCapture.js";
import { groupedEvent, groupedRoute } from "../../../helpers/groupedEvent.js";
import { pendingRun } from "../../../helpers/pendingRun.js";
import { redisPerFile } from "../../../helpers/redisPerFile.js";
import { openTestRedisState } from "../../../helpers/testRedisState.js";

// A Redis of the file's own: the tests make it refuse writes (maxmemory) and break its keys.
const own = redisPerFile({ roomAfterEach: true });

const GROUPED = groupedRoute(0.2, 60);
const routes: Record<string, ResolvedRoute> = {
  pr: { name: "pr", profile: "default", secret: "s", route: { prompt: "p", deliver: "log" } } as never,
  grp: { name: "grp", profile: "default", secret: "s", route: GROUPED } as never,
};

/** The states the test opened, stopped after it (a held run let go first). */
const opened: Array<{ state: RedisState; goOn: () => void }> = [];
afterEach(async () => {
  for (const { state, goOn } of opened.splice(0)) {
    goOn();
    await state.stop(1000);
    await state.disconnect();
  }
});

/**
 * A redis state on keys of its own whose runs are recorded in `started` and, when `held`, wait for `goOn()`.
 * `stall`: its lock's length and how often it is renewed (30 s, none lapses in a test, unless told).
 */
async function state(
  options: { stall?: { lockDurationMs: number; stalledIntervalMs: number }; held?: boolean } = {},
) {
  const log = captureLogger();
  const started: QueuedRun[] = [];
  let goOn: () => void = () => {};
  const going =
    options.held === true
      ? new Promise<void>((resolve) => {
          goOn = resolve;
        })
      : Promise.resolve();
  const prefix = `rr${randomUUID()}`;
  const opening: RedisState = await openTestRedisState(own.server.url, prefix, {
    logger: log.logger,
    stall: options.stall ?? { lockDurationMs: 30_000, stalledIntervalMs: 30_000 },
    lookup: (name) => routes[name],
    async execute(run) {
      started.push(run);
      await going;
    },
  });
  opened.push({ state: opening, goOn: () => goOn() });
  return { state: opening, log, started, prefix, goOn: () => goOn() };
}

const event = (deliveryId: string) =>
  ({
    ...pendingRun(deliveryId),
    route: { prompt: "p", deliver: "log" },
    payload: {},
    headers: {},
  }) as unknown as AcceptedEvent;

describe("shared runs while Redis refuses writes or lost their job (state.backend: redis)", {
  timeout: 30_000,
}, () => {
  it("a run whose lock lapsed while Redis refused writes (full: OOM), its renewal among them, is said so at WARN, not blamed on a frozen Redis or a paused instance", async () => {
    // A 1 s lock (30 s by default), renewed every 0.5 s while Redis takes the renewal.
    const {
      state: s,
      log,
      started,
      prefix,
      goOn,
    } = await state({ stall: { lockDurationMs: 1000, stalledIntervalMs: 500 }, held: true });
    const lock = `${prefix}:bull:runs:${jobIdOf("pr:d-full")}:lock`;
    const notRecorded = () => log.messages().filter((m) => m.includes("did not record its end"));
    await s.enqueueRun(event("d-full"));
    s.start();
    await vi.waitFor(() => expect(started).toHaveLength(1), { timeout: 10_000, interval: 20 });
    await own.redis.config("SET", "maxmemory", "1");
    // Its renewals refused, the lock lapses (a read, which a full Redis answers).
    await vi.waitFor(async () => expect(await own.redis.exists(lock)).toBe(0), {
      timeout: 10_000,
      interval: 20,
    });
    await own.redis.config("SET", "maxmemory", "0");
    goOn();
    await vi.waitFor(() => expect(notRecorded()).toHaveLength(1), { timeout: 15_000, interval: 50 });
    expect(notRecorded()[0]).toMatch(
      /^\[webhook\] pr: run of delivery d-full ended here, but Redis did not record its end \((Missing lock|Lock mismatch) for job j-pr%3Ad-full\. [^)]*\): its 1 s lock had expired first \(Redis refused writes \(OOM command not allowed [^)]*\) while it ran, the lock's renewal among them, for longer than that; a full Redis: free memory or raise its maxmemory\) or another instance had taken the run over, so the shared queue runs it again on some instance \(this one included\) — its reply may be delivered twice$/,
    );
    expect(notRecorded()[0]).not.toMatch(/frozen|paused/);
  });

  it("a job whose hash was evicted while its id waited in the queue is said gone from Redis, named by its job id, and removed: not put off for want of a route, not run", async () => {
    const { state: s, log, started, prefix } = await state();
    const job = `${prefix}:bull:runs:${jobIdOf("pr:d-evicted")}`;
    await s.enqueueRun(event("d-evicted"));
    // What an allkeys-* eviction does to a waiting job: its hash goes, its id stays in the wait list.
    await own.redis.del(job);
    s.start();
    await vi.waitFor(
      () =>
        expect(log.messages()).toContain(
          "[webhook] pr: run of delivery d-evicted does not run: its job is gone from Redis (restarted empty, flushed or evicted), only its id (j-pr%3Ad-evicted) was left in the queue — it is removed; svc webhook redeliver d-evicted on the instance that answered its request sends the event again",
        ),
      { timeout: 10_000, interval: 20 },
    );
    await vi.waitFor(async () => expect(await own.redis.exists(job)).toBe(0), {
      timeout: 10_000,
      interval: 20,
    });
    const queued = await Promise.all([
      ...["wait", "active"].map((list) => own.redis.lrange(`${prefix}:bull:runs:${list}`, 0, -1)),
      ...["delayed", "completed", "failed"].map((set) =>
        own.redis.zrange(`${prefix}:bull:runs:${set}`, "0", "-1"),
      ),
    ]);
    expect(queued.flat()).toEqual([]);
    expect(started).toEqual([]);
    expect(log.messages().filter((m) => /earlier version|undefined/.test(m))).toEqual([]);
  });

  it("a coalescing group whose run Redis refuses to store as it fires is logged dispatched once, when its run is stored, not at each refused try", async () => {
    const { state: s, log, started, prefix } = await state();
    const meta = `${prefix}:bull:runs:meta`;
    const dispatched = () => log.messages().filter((m) => m === "[webhook] grp: coalesced group dispatched");
    // The runs queue's add refused (a key of the wrong type where it keeps its settings) until it is put right.
    await own.redis.set(meta, "not a hash");
    s.start();
    expect(await s.coalesce(groupedEvent(GROUPED, "g-1"))).toBe("coalesced");
    await vi.waitFor(
      () => expect(log.messages()).toContain("[state] coalesce job failed; it is tried again"),
      { timeout: 10_000, interval: 20 },
    );
    expect(dispatched()).toEqual([]);
    await own.redis.del(meta);
    await vi.waitFor(() => expect(started).toHaveLength(1), { timeout: 15_000, interval: 20 });
    expect(dispatched()).toHaveLength(1);
  });
});
