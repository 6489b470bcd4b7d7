import { randomUUID } from "node:crypto";
import { readdirSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createCronScheduler } from "../../../../src/actors/cron.js";
import { cronRunNotes } from "../../../../src/io/cronRunNotes.js";
import { silentLogger } from "../../../../src/io/log.js";
import {
  commandOptions,
  connectRedis,
  createRedisHealth,
  LIVENESS_PING_MS,
  refusalHint,
} from "../../../../src/io/state/redis/connection.js";
import { createCronLease } from "../../../../src/io/state/redis/cronLease.js";
import { serverGreeting } from "../../../../src/io/state/redis/greeting.js";
import { createSharedIdempotency } from "../../../../src/io/state/redis/idempotency.js";
import { redisKeys } from "../../../../src/io/state/redis/keys.js";
import { createSharedQueue, jobIdOf, type SharedQueue } from "../../../../src/io/state/redis/sharedQueue.js";
import { cronStore } from "../../../../src/io/stores/cronStore.js";
import { StateUnavailableError } from "../../../../src/streams/stateUnavailable.js";
import { captureLogger } from "../../../fakes/logCapture.js";
import { type TempHome, tempHome } from "../../../helpers/home.js";
import { startTestRedis, type TestRedis } from "../../../helpers/redis.js";
import { runsQueue } from "../../../helpers/runsQueue.js";

let server: TestRedis;
let redis: Redis;
let home: TempHome | undefined;
afterEach(() => home?.cleanup());
beforeAll(async () => {
  server = await startTestRedis();
  redis = await connectRedis(server.url, "config.yaml", commandOptions());
});
afterAll(async () => {
  redis.disconnect();
  await server.cleanup();
});

/** A "runs" queue on the file's Redis, one job at a time, whose jobs record their `n` in `ran`. */
function recordingQueue(keys: ReturnType<typeof redisKeys>): {
  queue: SharedQueue<{ n: number }>;
  ran: number[];
} {
  const ran: number[] = [];
  const queue = runsQueue(server.url, keys, (n) => ran.push(n));
  return { queue, ran };
}

describe("shared queue (BullMQ)", () => {
  it("one job per key across instances, run once by one of them; a finished key enqueued again does not run again", async () => {
    const keys = redisKeys(`q${randomUUID()}`);
    const health = createRedisHealth("test", silentLogger());
    const ran: Array<{ by: number; n: number }> = [];
    const queues: SharedQueue<{ n: number }>[] = [1, 2, 3].map((by) =>
      createSharedQueue<{ n: number }>({
        url: server.url,
        name: "runs",
        keys,
        health,
        logger: silentLogger(),
        concurrency: 2,
        async process(data) {
          ran.push({ by, n: data.n });
        },
      }),
    );
    try {
      await Promise.all(
        Array.from({ length: 30 }, (_, n) => queues[n % 3]?.enqueue(`hook:${n}`, { n })).concat(
          Array.from({ length: 30 }, (_, n) => queues[(n + 1) % 3]?.enqueue(`hook:${n}`, { n })),
        ),
      );
      for (const q of queues) q.start();
      await vi.waitFor(() => expect(ran).toHaveLength(30), { timeout: 15_000, interval: 20 });
      await (queues[0] as SharedQueue<{ n: number }>).enqueue("hook:3", { n: 3 });
      await (queues[0] as SharedQueue<{ n: number }>).enqueue("hook:30", { n: 30 });
      await vi.waitFor(() => expect(ran).toHaveLength(31), { timeout: 15_000, interval: 20 });
      expect(ran.map((r) => r.n).sort((a, b) => a - b)).toEqual(Array.from({ length: 31 }, (_, n) => n));
    } finally {
      await Promise.all(queues.map((q) => q.close(1000)));
    }
  });

  it("a finished job under a key added more than renewAfterMs ago (its add mark expired on Redis's clock) is replaced and runs (a redelivery after the id's hour); a younger one, or one still waiting, is not", async () => {
    const keys = redisKeys(`q${randomUUID()}`);
    const { queue, ran } = recordingQueue(keys);
    const hour = { renewAfterMs: 3_600_000 };
    /** What Redis does an hour after the add: the mark expires. */
    const hourOver = (key: string) => redis.del(keys.added(key));
    try {
      // Waiting (not finished): an enqueue of its key an hour later is still the same job.
      await queue.enqueue("hook:w", { n: 0 }, hour);
      const ttl = await redis.pttl(keys.added("hook:w"));
      expect(ttl).toBeGreaterThan(3_500_000);
      expect(ttl).toBeLessThanOrEqual(3_600_000);
      await hourOver("hook:w");
      await queue.enqueue("hook:w", { n: 2 }, hour);
      await queue.enqueue("hook:a", { n: 1 }, hour);
      queue.start();
      await vi.waitFor(() => expect(ran).toEqual([0, 1]), { timeout: 15_000, interval: 20 });
      // Finished, within the hour: a retry of the stored event, not run again.
      await queue.enqueue("hook:a", { n: 3 }, hour);
      // Finished, added over an hour ago: a new event under the same id, which runs.
      await hourOver("hook:a");
      await queue.enqueue("hook:a", { n: 4 }, hour);
      await vi.waitFor(() => expect(ran).toEqual([0, 1, 4]), { timeout: 15_000, interval: 20 });
      // Without the option a finished job is kept whatever its age.
      await hourOver("hook:a");
      await queue.enqueue("hook:a", { n: 5 });
      await queue.enqueue("hook:b", { n: 6 });
      await vi.waitFor(() => expect(ran).toEqual([0, 1, 4, 6]), { timeout: 15_000, interval: 20 });
      expect(await queue.queue.getCompletedCount()).toBe(3);
    } finally {
      await queue.close(1000);
    }
  });

  it("an idempotency record made with recordAndClear clears the way for its run's add as the enqueue's own drop does: a finished job whose mark expired is replaced and runs, a younger one or one still waiting is not, and a duplicate's record changes nothing", async () => {
    const keys = redisKeys(`q${randomUUID()}`);
    const { queue, ran } = recordingQueue(keys);
    const HOUR = 3_600_000;
    const cleared = { renewAfterMs: HOUR, cleared: true };
    const record = queue.recordAndClear(redis);
    /** A new event's record of `key`, as the idempotency stage makes it (a minute, pending). */
    const recorded = (key: string, token: string) => record(keys.seen(key), key, token, 60, HOUR);
    /** Its record's hour over: the record and the add mark gone, as Redis lets them expire. */
    const hourOver = (key: string) => redis.del(keys.seen(key), keys.added(key));
    try {
      // A first event: its record marks the add (an hour on Redis's clock); its enqueue sends nothing more.
      expect(await recorded("hook:a", "t1")).toBe("OK");
      expect(await redis.get(keys.seen("hook:a"))).toBe("t1");
      const ttl = await redis.pttl(keys.added("hook:a"));
      expect(ttl).toBeGreaterThan(3_500_000);
      expect(ttl).toBeLessThanOrEqual(HOUR);
      await queue.enqueue("hook:a", { n: 1 }, cleared);
      // Waiting (not finished): a record of its key an hour later leaves it, and the add is the same job.
      expect(await recorded("hook:w", "t2")).toBe("OK");
      await queue.enqueue("hook:w", { n: 0 }, cleared);
      await hourOver("hook:w");
      expect(await recorded("hook:w", "t3")).toBe("OK");
      await queue.enqueue("hook:w", { n: 2 }, cleared);
      queue.start();
      await vi.waitFor(() => expect(ran).toEqual([1, 0]), { timeout: 15_000, interval: 20 });
      // A duplicate's record: not made, and nothing else done (the mark keeps its time).
      await redis.pexpire(keys.added("hook:a"), 5_000);
      expect(await recorded("hook:a", "t4")).toBeNull();
      expect(await redis.get(keys.seen("hook:a"))).toBe("t1");
      expect(await redis.pttl(keys.added("hook:a"))).toBeLessThanOrEqual(5_000);
      // Finished, its record gone within the hour (forgotten after a 503): the job stays, not run again.
      await redis.del(keys.seen("hook:a"));
      expect(await recorded("hook:a", "t5")).toBe("OK");
      await queue.enqueue("hook:a", { n: 3 }, cleared);
      // Finished, its hour over: a new event under the same id, which runs.
      await hourOver("hook:a");
      expect(await recorded("hook:a", "t6")).toBe("OK");
      await queue.enqueue("hook:a", { n: 4 }, cleared);
      await vi.waitFor(() => expect(ran).toEqual([1, 0, 4]), { timeout: 15_000, interval: 20 });
      expect(await queue.queue.getCompletedCount()).toBe(2);
    } finally {
      await queue.close(1000);
    }
  });

  it("the hour of a finished job is Redis's, not the clock of the instance that added it: one whose clock runs ahead does not keep a redelivery after the hour from running, one whose clock runs behind does not have a retry within the hour run again", async () => {
    const keys = redisKeys(`q${randomUUID()}`);
    const { queue, ran } = recordingQueue(keys);
    const hour = { renewAfterMs: 3_600_000 };
    const job = `${keys.bullPrefix()}:runs:${jobIdOf("hook:skew")}`;
    try {
      queue.start();
      await queue.enqueue("hook:skew", { n: 1 }, hour);
      await vi.waitFor(() => expect(ran).toEqual([1]), { timeout: 15_000, interval: 20 });
      // Added (as its timestamp says) by an instance whose clock runs 5 minutes behind, 56 minutes ago:
      // an hour and one minute by that clock. Its hour is not over on Redis's clock (the mark is there),
      // so the retry of a sender whose id's pending minute lapsed is the stored event, not run again.
      await redis.hset(job, "timestamp", String(Date.now() - 3_660_000));
      await queue.enqueue("hook:skew", { n: 2 }, hour);
      // Added by an instance whose clock runs 5 minutes ahead, an hour and a minute ago: 56 minutes by
      // its timestamp. Its hour is over on Redis's clock (the mark expired), so the redelivery runs.
      await redis.hset(job, "timestamp", String(Date.now() - 3_360_000));
      await redis.del(keys.added("hook:skew"));
      await queue.enqueue("hook:skew", { n: 3 }, hour);
      await vi.waitFor(() => expect(ran).toEqual([1, 3]), { timeout: 15_000, interval: 20 });
    } finally {
      await queue.close(1000);
    }
  });

  it("enqueue rejects with StateUnavailableError while Redis is down", async () => {
    const own = await startTestRedis();
    const queue = createSharedQueue<{ n: number }>({
      url: own.url,
      name: "runs",
      keys: redisKeys("down"),
      health: createRedisHealth("test", silentLogger()),
      logger: silentLogger(),
      concurrency: 1,
      process: async () => {},
    });
    try {
      await queue.enqueue("hook:1", { n: 1 });
      await own.stop();
      await expect(queue.enqueue("hook:2", { n: 2 })).rejects.toBeInstanceOf(StateUnavailableError);
    } finally {
      await queue.close(0);
      await own.cleanup();
    }
  });

  it("every job gets a signal that follows the instance's stop: close aborts the jobs still running past the drain and leaves them unfinished for another instance", async () => {
    const keys = redisKeys(`s${randomUUID()}`);
    const signals: AbortSignal[] = [];
    const log = captureLogger();
    const instance = (process: (data: { n: number }, signal: AbortSignal) => Promise<void>) =>
      createSharedQueue<{ n: number }>({
        url: server.url,
        name: "runs",
        noun: "agent run(s)",
        keys,
        health: createRedisHealth("test", silentLogger()),
        logger: log.logger,
        concurrency: 2,
        process,
      });
    const queue = instance(
      (_data, signal) =>
        // As a run does: it rejects once its signal is aborted.
        new Promise<void>((_resolve, reject) => {
          signals.push(signal);
          signal.addEventListener("abort", () => reject(signal.reason), { once: true });
        }),
    );
    // Not started: only reads the jobs' states after the first instance stopped.
    const other = instance(async () => {});
    let closed = false;
    try {
      await queue.enqueue("hook:1", { n: 1 });
      await queue.enqueue("hook:2", { n: 2 });
      queue.start();
      await vi.waitFor(() => expect(signals).toHaveLength(2), { timeout: 15_000, interval: 20 });
      // A signal of each job's own (what a run composes from it must not stay in a signal as long-lived as
      // the instance's stop: runSignals.test.ts).
      expect(signals[0]).not.toBe(signals[1]);
      expect(signals.map((s) => s.aborted)).toEqual([false, false]);
      await queue.close(50);
      closed = true;
      expect(signals.map((s) => s.aborted)).toEqual([true, true]);
      const states = await Promise.all(
        ["hook:1", "hook:2"].map((key) => other.queue.getJobState(jobIdOf(key))),
      );
      expect(states).toEqual(["active", "active"]);
      // Said once, as a stop with one process says what it saved for the next start.
      expect(log.messages().filter((m) => m.includes("drain ended"))).toEqual([
        "[state] 2 agent run(s) still running when the drain ended stopped; they stay in Redis and run again from the start on some instance (this one after its restart) once their lock expires, within about a minute (at most a minute and a half)",
      ]);
    } finally {
      if (!closed) await queue.close(0);
      await other.close(0);
    }
  });

  it("a job released from its slot is set aside under a lease its instance renews while its process goes on: no other instance takes it; once the process ends the job is finished", async () => {
    const keys = redisKeys(`q${randomUUID()}`);
    type Data = { n: number; kept?: true; done?: true };
    const seen: Array<{ by: string; data: Data }> = [];
    let goOn: () => void = () => {};
    const going = new Promise<void>((resolve) => {
      goOn = resolve;
    });
    let released = false;
    // A lease of 0.45 s, renewed every 0.15 s: without the renewal the other instance would take the job
    // within the 1.2 s the process goes on after its release.
    const stall = { lockDurationMs: 450, stalledIntervalMs: 200 };
    const make = (by: string) =>
      createSharedQueue<Data>({
        url: server.url,
        name: "runs",
        keys,
        health: createRedisHealth("test", silentLogger()),
        logger: silentLogger(),
        concurrency: 1,
        stall,
        async process(data, _signal, _job, _token, slot) {
          seen.push({ by, data });
          if (data.done === true || data.kept === true) return;
          released = await slot.release({ ...data, kept: true }, { ...data, done: true });
          await going;
        },
      });
    const [a, b] = [make("a"), make("b")];
    try {
      await a.enqueue("hook:1", { n: 1 });
      a.start();
      await vi.waitFor(() => expect(released).toBe(true), { timeout: 10_000, interval: 10 });
      expect([a.running(), a.outside()]).toEqual([0, 1]);
      b.start();
      await new Promise((resolve) => setTimeout(resolve, 1200));
      expect(seen).toEqual([{ by: "a", data: { n: 1 } }]);
      goOn();
      await vi.waitFor(async () => expect(await a.queue.getJobState(jobIdOf("hook:1"))).toBe("completed"), {
        timeout: 10_000,
        interval: 20,
      });
      expect(seen.slice(1).map((s) => s.data)).toEqual([{ n: 1, done: true }]);
      expect(a.outside()).toBe(0);
    } finally {
      await Promise.all([a.close(1000), b.close(1000)]);
    }
  });
});

describe("a worker whose commands Redis refuses", { timeout: 30_000 }, () => {
  it("is logged at ERROR with the refusal and its fix, at most once a minute, not at debug: requests may still get 202 while no run starts", async () => {
    const prefix = `w${randomUUID().slice(0, 8)}`;
    const user = `u${randomUUID().slice(0, 8)}`;
    // Keys and scripts allowed (the start's checks pass, enqueues work), blocking commands not (BZPOPMIN).
    await redis.call("ACL", "SETUSER", user, "on", ">worker-pw-7a3b", `~${prefix}:*`, "+@all", "-@blocking");
    const url = server.url.replace("redis://", `redis://${user}:worker-pw-7a3b@`);
    const log = captureLogger();
    const queue = createSharedQueue<{ n: number }>({
      url,
      name: "runs",
      keys: redisKeys(prefix),
      health: createRedisHealth("redis://127.0.0.1/0", log.logger),
      logger: log.logger,
      concurrency: 1,
      async process() {},
    });
    try {
      await queue.enqueue("hook:1", { n: 1 });
      queue.start();
      const refused = () => log.messages().filter((m) => m.includes("refused a command of"));
      await vi.waitFor(() => expect(refused()).toHaveLength(1), { timeout: 15_000, interval: 50 });
      expect(refused()[0]).toMatch(
        /^\[state\] Redis at redis:\/\/127\.0\.0\.1\/0 refused a command of the runs queue's worker \(NOPERM .*\); its jobs do not run on this instance while it refuses \(its ACL does not let the user of state\.redis_url do this: grant it the command and the keys under the prefix; logged at most once a minute\)$/,
      );
      // BullMQ retries (several times a second): still one line within the minute.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(refused()).toHaveLength(1);
      expect(log.lines().join("\n")).not.toContain("worker-pw-7a3b");
    } finally {
      await queue.close(0);
    }
  });
});

describe("a unix socket (state.redis_url redis://localhost/0?path=<socket>)", { timeout: 30_000 }, () => {
  it("is connected to by the start's check, the producer and the worker: a job added runs", async () => {
    const own = await startTestRedis({ unixSocket: true });
    const url = own.socketUrl as string;
    const checked = await connectRedis(url, "config.yaml", commandOptions(), "sock");
    const ran: number[] = [];
    const queue = createSharedQueue<{ n: number }>({
      url,
      name: "runs",
      keys: redisKeys("sock"),
      health: createRedisHealth("test", silentLogger()),
      logger: silentLogger(),
      concurrency: 1,
      async process(data) {
        ran.push(data.n);
      },
    });
    try {
      expect(await checked.call("CLIENT", "INFO")).toMatch(/ addr=\/\S*redis\.sock/);
      await queue.enqueue("hook:1", { n: 1 });
      queue.start();
      await vi.waitFor(() => expect(ran).toEqual([1]), { timeout: 15_000, interval: 20 });
    } finally {
      await queue.close(0);
      checked.disconnect();
      await own.cleanup();
    }
  });
});

describe("cron lease", () => {
  it("one instance wins a due time; the next due time is a new lease", async () => {
    const keys = redisKeys(`c${randomUUID()}`);
    const health = createRedisHealth("test", silentLogger());
    const leases = [1, 2, 3].map(() => createCronLease(redis, keys, health));
    const due = "2026-11-28T01:00:00.000Z";
    const wins = await Promise.all(leases.map((l) => l.claim("default", "j1", due)));
    expect(wins.filter(Boolean)).toHaveLength(1);
    expect(await leases[1]?.claim("default", "j1", "2026-11-28T02:00:00.000Z")).toBe(true);
    expect(await leases[2]?.claim("work", "j1", due)).toBe(true);
  });

  it("a due time claimed ahead is won again by its holder, and given back only by it", async () => {
    const keys = redisKeys(`c${randomUUID()}`);
    const health = createRedisHealth("test", silentLogger());
    const [running, other] = [1, 2].map(() => createCronLease(redis, keys, health)) as [
      ReturnType<typeof createCronLease>,
      ReturnType<typeof createCronLease>,
    ];
    const due = "2026-11-28T01:00:00.000Z";
    expect(await running.claim("default", "j1", due)).toBe(true);
    expect(await other.claim("default", "j1", due)).toBe(false);
    expect(await running.claim("default", "j1", due)).toBe(true);
    await other.release("default", "j1", due);
    expect(await other.claim("default", "j1", due)).toBe(false);
    await running.release("default", "j1", due);
    expect(await other.claim("default", "j1", due)).toBe(true);
    expect(await running.claim("default", "j1", due)).toBe(false);
    // Held ahead while a run goes on, it lapses within a minute unless claimed again (its instance died).
    const next = "2026-11-28T02:00:00.000Z";
    expect(await running.claim("default", "j1", next, true)).toBe(true);
    const pttl = await redis.pttl(keys.cronLease("default", "j1", next));
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(60_000);
    // Claimed when it comes, it is kept as any due time is.
    expect(await running.claim("default", "j1", next)).toBe(true);
    expect(await redis.pttl(keys.cronLease("default", "j1", next))).toBeGreaterThan(60_000);
  });
});

/**
 * Each scheduled run's lease was kept 24 h, so a job `every 1s` kept about 86,400 keys in Redis. A lease is
 * now kept twice the time to the job's next due time, at least five minutes (past clock skew).
 */
describe("cron leases of a frequent job", () => {
  it("a job every 1s leaves leases that expire within five minutes (about 300 keys at any time); a daily job's outlives the next day's due time", async () => {
    const keys = redisKeys(`c${randomUUID()}`);
    const lease = createCronLease(redis, keys, createRedisHealth("test", silentLogger()));
    home = tempHome();
    const store = cronStore(join(home.dir, "cron", "jobs.json"));
    const start = Date.parse("2026-11-22T12:00:00.000Z");
    await store.update((records) => {
      for (const [id, schedule] of [
        ["fast", "every 1s"],
        ["daily", "0 12 * * *"],
      ] as const)
        records[id] = {
          id,
          name: id,
          schedule,
          prompt: "p",
          deliver: "log",
          deliver_extra: {},
          state: "enabled",
          next_run: new Date(start).toISOString(),
          created_at: new Date(start - 60_000).toISOString(),
        };
    });
    let now = start + 100;
    const scheduler = createCronScheduler({
      stores: { profiles: () => ["default"], store: () => store },
      runJob: async () => "ok",
      logger: silentLogger(),
      clock: { now: () => now, setTimeout: () => 0, clearTimeout: () => {} },
      claim: lease.claim,
      release: lease.release,
    });
    const runs = 30;
    for (let i = 0; i < runs; i++) {
      await scheduler.tick();
      await scheduler.idle();
      now += 1000;
    }
    const ttls = async (jobId: string) => {
      const found = await redis.keys(keys.cronLease("default", jobId, "*"));
      return Promise.all(found.map((key) => redis.pttl(key)));
    };
    const fast = await ttls("fast");
    expect(fast).toHaveLength(runs);
    for (const ttl of fast) {
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(5 * 60_000);
    }
    // An instance back the next afternoon claims the due time the others ran at noon: still held then.
    const [daily] = await ttls("daily");
    expect(daily).toBeGreaterThan(47 * 3600_000);
  });
});

/** A job due every minute, first at `start`. */
function everyMinuteJob(start: number) {
  return {
    id: "long",
    name: "long",
    schedule: "every 1m",
    prompt: "p",
    deliver: "log",
    deliver_extra: {},
    state: "enabled" as const,
    next_run: new Date(start).toISOString(),
    created_at: new Date(start - 60_000).toISOString(),
  };
}

/**
 * A schedule edited while the job was paused by hand kept the next run of the schedule before, with Redis's
 * leases as without: `@daily` changed to `5s` while paused, then enabled, waited for midnight.
 */
describe("a schedule edited while its job is paused by hand (state.backend: redis)", () => {
  it("takes effect once the job is enabled again: its next run is worked out from now, claimed and run then", async () => {
    const keys = redisKeys(`c${randomUUID()}`);
    home = tempHome();
    const start = Date.parse("2026-11-22T12:00:00.000Z");
    let now = start;
    const store = cronStore(join(home.dir, "cron", "jobs.json"));
    const job = { ...everyMinuteJob(start), id: "dj", name: "dj", schedule: "@daily" };
    await store.update((records) => {
      records[job.id] = { ...job, next_run: "2026-11-23T00:00:00.000Z" };
    });
    const edit = (change: Record<string, string>) =>
      store.update((records) => {
        records[job.id] = { ...(records[job.id] as typeof job), ...change };
      });
    const lease = createCronLease(redis, keys, createRedisHealth("test", silentLogger()));
    const ran: string[] = [];
    const log = captureLogger();
    const scheduler = createCronScheduler({
      stores: { profiles: () => ["default"], store: () => store },
      runJob: async (run) => {
        ran.push(run.id);
        return "ok";
      },
      logger: log.logger,
      clock: { now: () => now, setTimeout: () => 0, clearTimeout: () => {} },
      claim: lease.claim,
      release: lease.release,
      claimedDueTimes: lease.claimedDueTimes,
    });
    await scheduler.tick();
    for (const change of [{ state: "paused" }, { schedule: "5s" }, { state: "enabled" }]) {
      await edit(change);
      now += 1000;
      await scheduler.tick();
    }
    const next = new Date(now + 5000).toISOString();
    expect(store.read().records.dj?.next_run).toBe(next);
    expect(log.messages()).toContain(
      `[cron] dj: schedule changed from "@daily" to "5s"; the next run is ${next}`,
    );
    now += 5000;
    await scheduler.tick();
    await scheduler.idle();
    expect(ran).toEqual(["dj"]);
  });
});

/**
 * A due time skipped because this instance's run outlasted it was held with the minute of a hold ahead,
 * claimed a last time as it passed: an instance whose clock ran more than a minute behind (within the five
 * minutes of skew the leases allow) found it lapsed and ran the skipped occurrence.
 */
describe("a due time skipped while a long run goes on", () => {
  it("is kept as a run's due time is (at least five minutes, the clock skew the leases allow), not the minute of a hold ahead", async () => {
    const keys = redisKeys(`c${randomUUID()}`);
    const health = createRedisHealth("test", silentLogger());
    home = tempHome();
    const start = Date.parse("2026-11-22T12:00:00.000Z");
    const job = everyMinuteJob(start);
    const store = cronStore(join(home.dir, "cron", "jobs.json"));
    await store.update((records) => {
      records[job.id] = { ...job };
    });
    const lease = createCronLease(redis, keys, health);
    let now = start + 100;
    let endRun = () => {};
    const notes = join(home.dir, "state", "cron-runs");
    const scheduler = createCronScheduler({
      stores: { profiles: () => ["default"], store: () => store },
      runJob: () => new Promise((resolve) => (endRun = () => resolve("ok"))),
      logger: silentLogger(),
      clock: { now: () => now, setTimeout: () => 0, clearTimeout: () => {} },
      claim: lease.claim,
      release: lease.release,
      claimHolder: lease.holder,
      runNotes: cronRunNotes(notes),
    });

    await scheduler.tick();
    // The run's note names the due time it claimed and the claim's holder, which the start after a kill
    // gives back before it catches the occurrence up.
    const [noted] = readdirSync(notes).map((name) => JSON.parse(readlinkSync(join(notes, name))));
    expect(noted).toMatchObject({
      jobId: "long",
      dueRun: job.next_run,
      advancedTo: new Date(start + 60_000).toISOString(),
      claimedDueAt: job.next_run,
      claimHolder: lease.holder,
    });
    // Its run goes on past the next due time, which it skips, and ends right after.
    now = start + 60_100;
    await scheduler.tick();
    endRun();
    await scheduler.idle();

    const skipped = keys.cronLease("default", job.id, new Date(start + 60_000).toISOString());
    expect(await redis.pttl(skipped)).toBeGreaterThan(4 * 60_000);
  });
});

/**
 * While a scheduled run goes on, its instance holds the job's next due time ahead (a minute, claimed again at
 * each check). An instance killed mid-run leaves that hold to lapse: the others, finding the due time held
 * when it came, skipped it and never looked again, so that occurrence ran nowhere.
 */
describe("a due time held ahead by an instance that died mid-run", () => {
  it("runs on another instance once the hold lapses; held by a live instance (renewed, then kept as it passes), it does not", async () => {
    const keys = redisKeys(`c${randomUUID()}`);
    const health = createRedisHealth("test", silentLogger());
    home = tempHome();
    const start = Date.parse("2026-11-22T12:00:00.000Z");
    const job = everyMinuteJob(start);
    let now = start + 100;
    const clock = { now: () => now, setTimeout: () => 0, clearTimeout: () => {} };
    // Two instances, each with its copy of the store and its own lease holder.
    const instance = (name: string) => {
      const store = cronStore(join(home?.dir ?? "", name, "cron", "jobs.json"));
      const lease = createCronLease(redis, keys, health);
      const ran: string[] = [];
      const log = captureLogger();
      const scheduler = createCronScheduler({
        stores: { profiles: () => ["default"], store: () => store },
        // A run that never ends here: its instance is the one that dies (it checks no more).
        runJob: (run) => {
          ran.push(run.id);
          return name === "a" ? new Promise<never>(() => {}) : Promise.resolve("ok");
        },
        logger: log.logger,
        clock,
        claim: lease.claim,
        release: lease.release,
        heldAhead: lease.heldAhead,
      });
      return { store, scheduler, ran, log };
    };
    const [a, b] = [instance("a"), instance("b")];
    for (const { store } of [a, b])
      await store.update((records) => {
        records[job.id] = { ...job };
      });
    await a.scheduler.tick();
    expect(a.ran).toHaveLength(1);
    // B finds the due time A runs taken, as before.
    await b.scheduler.tick();
    expect(b.ran).toHaveLength(0);
    const next = new Date(start + 60_000).toISOString();
    const hold = keys.cronLease("default", job.id, next);
    expect(await redis.pttl(hold)).toBeLessThanOrEqual(60_000);
    // A dies mid-run (no more checks): its hold ages; here it is left 300 ms instead of a minute.
    await redis.pexpire(hold, 300);
    now = start + 60_100;
    await b.scheduler.tick();
    expect(b.ran).toHaveLength(0);
    await vi.waitFor(async () => expect(await redis.exists(hold)).toBe(0), { timeout: 5_000, interval: 50 });
    now = start + 61_100;
    await b.scheduler.tick();
    await b.scheduler.idle();
    expect(b.ran).toHaveLength(1);
    expect(b.log.messages()).toContain(
      `[cron] long: run at ${next} was held by another instance for its run of the job going on then, and that hold lapsed (the instance was killed mid-run): the run starts on this instance now`,
    );
    // Run once: later checks before the next due time start nothing more.
    now = start + 62_100;
    await b.scheduler.tick();
    await b.scheduler.idle();
    expect(b.ran).toHaveLength(1);

    // A live holder: it checks on, so as the due time passes it keeps it as a run's; B never runs it.
    const c = instance("a");
    const third = new Date(start + 180_000).toISOString();
    await c.store.update((records) => {
      records[job.id] = { ...job, next_run: new Date(start + 120_000).toISOString() };
    });
    await b.store.update((records) => {
      records[job.id] = { ...job, next_run: new Date(start + 120_000).toISOString() };
    });
    now = start + 120_100;
    await c.scheduler.tick();
    expect(c.ran).toHaveLength(1);
    now = start + 180_100;
    await b.scheduler.tick();
    await c.scheduler.tick();
    now = start + 181_100;
    await b.scheduler.tick();
    await b.scheduler.idle();
    expect(b.ran).toHaveLength(1);
    expect(await redis.pttl(keys.cronLease("default", job.id, third))).toBeGreaterThan(60_000);
  });
});

/**
 * The WARN that says how many runs were missed (the gateway was down, or its clock stepped forward) was said
 * only with one process: with a shared state the catch-up ran, and nothing said what it stood for.
 */
describe("runs missed while every instance was down (state.backend: redis)", () => {
  it("are said once with their count (WARN), by the instance that wins the catch-up's claim and runs it; the other says only that it runs none", async () => {
    const keys = redisKeys(`c${randomUUID()}`);
    const health = createRedisHealth("test", silentLogger());
    home = tempHome();
    const start = Date.parse("2026-11-22T12:00:00.000Z");
    const job = { ...everyMinuteJob(start), id: "hourly", name: "hourly", schedule: "every 1h" };
    // Back five hours and a moment after its next run: that one and five more came due meanwhile.
    const now = start + 5 * 3_600_000 + 100;
    const clock = { now: () => now, setTimeout: () => 0, clearTimeout: () => {} };
    const instance = async (name: string) => {
      const store = cronStore(join(home?.dir ?? "", name, "cron", "jobs.json"));
      await store.update((records) => {
        records[job.id] = { ...job };
      });
      const lease = createCronLease(redis, keys, health);
      const ran: string[] = [];
      const log = captureLogger();
      const scheduler = createCronScheduler({
        stores: { profiles: () => ["default"], store: () => store },
        runJob: async (run) => {
          ran.push(run.id);
          return "ok";
        },
        logger: log.logger,
        clock,
        claim: lease.claim,
        release: lease.release,
        claimedDueTimes: lease.claimedDueTimes,
      });
      return { scheduler, ran, log };
    };
    const [a, b] = [await instance("a"), await instance("b")];
    for (const { scheduler } of [a, b]) {
      await scheduler.tick();
      await scheduler.idle();
    }
    expect([a.ran, b.ran]).toEqual([["hourly"], []]);
    const missed = (log: typeof a.log) => log.messages().filter((m) => m.includes("missed"));
    expect(missed(a.log)).toEqual([
      `[cron] hourly: 6 scheduled runs were missed since ${job.next_run}: none has a claim left in Redis — no gateway instance sharing the state ran them (none was running, or the clocks stepped forward), or one ran them more than 2 hours ago (a claim is kept that long); they are not run one by one — one catch-up run now, then the schedule goes on`,
    ]);
    expect(missed(b.log)).toEqual([]);
    expect(b.log.messages()).toContain(
      `[cron] hourly: no catch-up run here — the schedule's latest due time ${new Date(start + 5 * 3_600_000).toISOString()} (this store's next run was ${job.next_run}) was taken by another instance sharing the state, which runs the job meanwhile`,
    );
  });
});

/**
 * The missed-runs WARN on a shared state counted from this home's own store's `next_run`: after a rolling
 * restart, the instance that was down and won the latest due time said runs were missed "(the gateway was not
 * running…)" that the other instances had run. It counts only the due times no instance claimed.
 */
describe("runs missed by one instance while another ran them (state.backend: redis)", () => {
  const start = Date.parse("2026-11-23T12:00:00.000Z");
  const job = { ...everyMinuteJob(start), id: "often", name: "often", schedule: "every 5s" };

  /**
   * A gateway of its own home on the file's Redis (`keys`, through `client`), its store's next_run `start`,
   * on `clock`.
   */
  async function instance(
    keys: ReturnType<typeof redisKeys>,
    name: string,
    clock: { now(): number },
    client: Redis = redis,
  ) {
    const store = cronStore(join(home?.dir ?? "", name, "cron", "jobs.json"));
    await store.update((records) => {
      records[job.id] = { ...job };
    });
    const lease = createCronLease(client, keys, createRedisHealth("test", silentLogger()));
    const ran: string[] = [];
    const log = captureLogger();
    const scheduler = createCronScheduler({
      stores: { profiles: () => ["default"], store: () => store },
      runJob: async (run) => {
        ran.push(run.id);
        return "ok";
      },
      logger: log.logger,
      clock: { now: () => clock.now(), setTimeout: () => 0, clearTimeout: () => {} },
      claim: lease.claim,
      release: lease.release,
      claimedDueTimes: lease.claimedDueTimes,
    });
    const missed = () => log.messages().filter((m) => m.includes("missed"));
    return { scheduler, ran, missed };
  }

  /** A, back at `at` with its store's `next_run` where it was: its first check (the catch-up) made. */
  async function aBackAt(keys: ReturnType<typeof redisKeys>, at: number, client: Redis = redis) {
    const a = await instance(keys, "a", { now: () => at }, client);
    await a.scheduler.tick();
    await a.scheduler.idle();
    return a;
  }

  /** B alone runs the job's first `runs` occurrences (from `start`, every 5 s), then stops. */
  async function bRuns(keys: ReturnType<typeof redisKeys>, runs: number) {
    let now = start;
    const b = await instance(keys, "b", { now: () => now });
    for (let n = 0; n < runs; n++) {
      now = start + n * 5_000 + 100;
      await b.scheduler.tick();
      await b.scheduler.idle();
    }
    expect(b.ran).toHaveLength(runs);
    expect(b.missed()).toEqual([]);
  }

  /** A connection to the file's Redis as a user whose ACL refuses `refused` (removed after `use`). */
  async function refusing<T>(refused: string, use: (client: Redis) => Promise<T>): Promise<T> {
    const user = `no${refused}${randomUUID().slice(0, 8)}`;
    await redis.call("ACL", "SETUSER", user, "on", ">pw", "~*", "&*", "+@all", `-${refused}`);
    const url = new URL(server.url);
    url.username = user;
    url.password = "pw";
    const client = await connectRedis(url.toString(), "config.yaml", commandOptions());
    try {
      return await use(client);
    } finally {
      client.disconnect();
      await redis.call("ACL", "DELUSER", user);
    }
  }

  it("the latest claimed of the due times given is read from their own keys, only as far back as a claim may be kept", async () => {
    const keys = redisKeys(`c${randomUUID()}`);
    const lease = createCronLease(redis, keys, createRedisHealth("test", silentLogger()));
    const at = (s: number) => new Date(start + s * 1000).toISOString();
    /** `every 5s`'s due times before `beforeS`, latest first, down to `start`. */
    const dueTimesBefore = (beforeS: number) =>
      Array.from({ length: beforeS / 5 }, (_, n) => ({
        dueAt: at(beforeS - 5 * (n + 1)),
        nextDueAt: at(beforeS - 5 * n),
      }));
    expect(await lease.claim("default", "j1", at(10), false, at(15))).toBe(true);
    expect(await lease.claim("default", "j1", at(20), true)).toBe(true);
    await lease.claim("default", "j1:x", at(25));
    await lease.claim("default", "j2", at(25));
    await lease.claim("work", "j1", at(25));
    expect(await lease.claimedDueTimes("default", "j1", dueTimesBefore(30), start + 30_000)).toEqual({
      latest: at(20),
    });
    expect(await lease.claimedDueTimes("default", "j1", dueTimesBefore(20), start + 30_000)).toEqual({
      latest: at(10),
    });
    expect(await lease.claimedDueTimes("default", "j1", dueTimesBefore(10), start + 30_000)).toEqual({});
    // 11 minutes on, a claim of a due time (taken by the next one, kept 5 minutes, and 5 for the clocks) may
    // be kept only when the next came within the last 10 minutes: the due times before start+90s are not
    // read, though the keys of 10 and 20 are still there.
    const later = start + 30_000 + 11 * 60_000;
    const since = dueTimesBefore(30 + 11 * 60);
    const read = await lease.claimedDueTimes("default", "j1", since, later);
    expect(read).toEqual({ unread: { dueAt: at(30 + 60 - 5), keptMs: 5 * 60_000 } });
    // Taken no further than read: the 120 read and the one that stopped it.
    let taken = 0;
    const counted = (function* () {
      for (const due of since) {
        taken += 1;
        yield due;
      }
    })();
    await lease.claimedDueTimes("default", "j1", counted, later);
    expect(taken).toBe(121);
  });

  it("reads no SCAN: a Redis user whose ACL refuses SCAN still gets the count of the runs no instance ran", async () => {
    const keys = redisKeys(`c${randomUUID()}`);
    home = tempHome();
    await bRuns(keys, 9); // start … start+40s
    await refusing("scan", async (client) => {
      const a = await aBackAt(keys, start + 50_000 + 100, client);
      expect(a.ran).toEqual(["often"]);
      expect(a.missed()).toEqual([
        `[cron] often: 2 scheduled runs were missed since ${new Date(start + 45_000).toISOString()}: no gateway instance sharing the state ran them (none was running, or the clocks stepped forward); they are not run one by one — one catch-up run now, then the schedule goes on`,
      ]);
    });
  });

  it("claims that cannot be read (an ACL refusing MGET): rejects with its NOPERM, Redis does not read as refusing writes, and the WARN says it does not know", async () => {
    const keys = redisKeys(`c${randomUUID()}`);
    home = tempHome();
    await bRuns(keys, 9);
    await refusing("mget", async (client) => {
      const health = createRedisHealth("test", silentLogger());
      const lease = createCronLease(client, keys, health);
      const due = { dueAt: new Date(start).toISOString(), nextDueAt: new Date(start + 5_000).toISOString() };
      await expect(lease.claimedDueTimes("default", job.id, [due], start + 10_000)).rejects.toThrow(/NOPERM/);
      expect(health.refusing()).toBe(false);
      const a = await aBackAt(keys, start + 50_000 + 100, client);
      expect(a.ran).toEqual(["often"]);
      expect(a.missed()).toEqual([
        expect.stringMatching(
          new RegExp(
            `^\\[cron\\] often: 11 scheduled runs were missed since ${job.next_run}: whether an instance sharing the state ran some of them is not known — their claims could not be read from Redis \\(NOPERM[^)]*mget[^)]*\\); they are not run one by one`,
          ),
        ),
      ]);
    });
  });

  it("the instance back with its store's next_run 50 s old says only the runs no instance ran (2 of 11)", async () => {
    const keys = redisKeys(`c${randomUUID()}`);
    home = tempHome();
    await bRuns(keys, 9); // start … start+40s
    const a = await aBackAt(keys, start + 50_000 + 100);
    expect(a.ran).toEqual(["often"]);
    // start+45s and start+50s came due with no instance running: the catch-up (at start+50s) stands for both.
    expect(a.missed()).toEqual([
      `[cron] often: 2 scheduled runs were missed since ${new Date(start + 45_000).toISOString()}: no gateway instance sharing the state ran them (none was running, or the clocks stepped forward); they are not run one by one — one catch-up run now, then the schedule goes on`,
    ]);
  });

  it("none missed (the other ran every one before the due time claimed now): no WARN", async () => {
    const keys = redisKeys(`c${randomUUID()}`);
    home = tempHome();
    await bRuns(keys, 9);
    const a = await aBackAt(keys, start + 45_000 + 100);
    expect(a.ran).toEqual(["often"]);
    expect(a.missed()).toEqual([]);
  });

  it("the other's claims lapsed (every instance away longer than they are kept): all of them, from next_run", async () => {
    const keys = redisKeys(`c${randomUUID()}`);
    home = tempHome();
    await bRuns(keys, 9);
    // A claim of `every 5s` is kept 5 minutes: its keys gone, as they are once every instance was away longer.
    const leases = await redis.keys(`${keys.cronLease("default", job.id, "")}*`);
    expect(leases.length).toBeGreaterThanOrEqual(9);
    await redis.del(...leases);
    const a = await aBackAt(keys, start + 50_000 + 100);
    expect(a.missed()).toEqual([
      `[cron] often: 11 scheduled runs were missed since ${job.next_run}: no gateway instance sharing the state ran them (none was running, or the clocks stepped forward); they are not run one by one — one catch-up run now, then the schedule goes on`,
    ]);
  });

  it("back after longer than a claim is kept: counted from next_run, said as no claim left rather than as none ran them", async () => {
    const keys = redisKeys(`c${randomUUID()}`);
    home = tempHome();
    await bRuns(keys, 9); // start … start+40s, 20 minutes before A is back
    const a = await aBackAt(keys, start + 20 * 60_000 + 100);
    expect(a.ran).toEqual(["often"]);
    expect(a.missed()).toEqual([
      `[cron] often: 100 or more scheduled runs were missed since ${job.next_run}: none has a claim left in Redis — no gateway instance sharing the state ran them (none was running, or the clocks stepped forward), or one ran them more than 5 minutes ago (a claim is kept that long); they are not run one by one — one catch-up run now, then the schedule goes on`,
    ]);
  });
});

describe("a Redis that refuses writes (full)", { timeout: 30_000 }, () => {
  it("is refusing from a refused claim until a claim is taken again: a cluster whose only writes are its cron jobs' does not read unavailable once Redis has room", async () => {
    const own = await startTestRedis();
    const client = await connectRedis(own.url, "config.yaml", commandOptions());
    try {
      const keys = redisKeys(`c${randomUUID()}`);
      const health = createRedisHealth("test", silentLogger());
      const lease = createCronLease(client, keys, health);
      await client.config("SET", "maxmemory", "1");
      await expect(lease.claim("default", "j1", "2026-11-28T01:00:00.000Z")).rejects.toThrow(
        StateUnavailableError,
      );
      expect(health.refusing()).toBe(true);
      await client.config("SET", "maxmemory", "0");
      expect(await lease.claim("default", "j1", "2026-11-28T01:00:00.000Z")).toBe(true);
      expect(health.refusing()).toBe(false);
    } finally {
      client.disconnect();
      await own.cleanup();
    }
  });
});

describe("Redis health", () => {
  it("a refusal's log line says what to do about that refusal (a missing ACL permission is no full Redis)", () => {
    expect(refusalHint("OOM command not allowed when used memory > 'maxmemory'.")).toBe(
      "a full Redis: free memory or raise its maxmemory",
    );
    expect(
      refusalHint("NOPERM this user has no permissions to access one of the keys used as arguments"),
    ).toBe(
      "its ACL does not let the user of state.redis_url do this: grant it the command and the keys under the prefix",
    );
    expect(refusalHint("READONLY You can't write against a read only replica.")).toBe(
      "a read-only replica: point state.redis_url at the primary",
    );
    expect(refusalHint("LOADING Redis is loading the dataset in memory")).toContain("loading its data");
    expect(refusalHint("ERR something else")).toBe("see Redis's log");
  });

  it("a Redis that answers but refuses commands (full: OOM) is logged once a minute as refusing, not as unreachable and back again each second", async () => {
    const own = await startTestRedis();
    const log = captureLogger();
    let now = 1_000_000;
    const health = createRedisHealth("redis://x/0", log.logger, () => now);
    const watched = await connectRedis(own.url, "config.yaml", commandOptions());
    try {
      health.watch("commands", watched);
      const seen = createSharedIdempotency(watched, redisKeys("full"), health);
      await watched.config("SET", "maxmemory", "1");
      for (let i = 0; i < 3; i++)
        await expect(seen.checkAndAdd(`r:${i}`)).rejects.toBeInstanceOf(StateUnavailableError);
      now += 60_000;
      await expect(seen.checkAndAdd("r:9")).rejects.toBeInstanceOf(StateUnavailableError);
      const messages = log.messages();
      expect(messages.filter((m) => m.includes("is unreachable") || m.includes("reachable again"))).toEqual(
        [],
      );
      expect(messages.filter((m) => m.includes("refused a command (OOM"))).toHaveLength(2);
      expect(messages.find((m) => m.includes("refused a command"))).toContain(
        "(a full Redis: free memory or raise its maxmemory; logged at most once a minute)",
      );
      await watched.config("SET", "maxmemory", "0");
      expect(await seen.checkAndAdd("r:0")).toBe(false);
    } finally {
      watched.disconnect();
      await own.cleanup();
    }
  });

  it("a refusing Redis is still logged once a minute after the clock was set back (NTP), not silent for the step", async () => {
    const own = await startTestRedis();
    const log = captureLogger();
    const health = createRedisHealth("redis://x/0", log.logger);
    const watched = await connectRedis(own.url, "config.yaml", commandOptions());
    // Only Date and performance are faked: ioredis's own timers stay real.
    vi.useFakeTimers({ toFake: ["Date", "performance"] });
    try {
      health.watch("commands", watched);
      const seen = createSharedIdempotency(watched, redisKeys("full-back"), health);
      await watched.config("SET", "maxmemory", "1");
      await expect(seen.checkAndAdd("r:1")).rejects.toBeInstanceOf(StateUnavailableError);
      vi.setSystemTime(Date.now() - 3_600_000);
      vi.advanceTimersByTime(60_000);
      await expect(seen.checkAndAdd("r:2")).rejects.toBeInstanceOf(StateUnavailableError);
      expect(log.messages().filter((m) => m.includes("refused a command (OOM"))).toHaveLength(2);
      await watched.config("SET", "maxmemory", "0");
    } finally {
      vi.useRealTimers();
      watched.disconnect();
      await own.cleanup();
    }
  });

  // These three run at once: each has a Redis of its own and waits on real timeouts (the commands' and
  // PINGs' own, a pause), and none fakes a timer.
  it.concurrent("a command that got no answer in time on a connection that stayed open, and a PING none either (a frozen Redis), is an outage until a PING answers; the next outage is reported", async () => {
    const own = await startTestRedis();
    const log = captureLogger();
    const health = createRedisHealth("test", log.logger);
    // A command's timeout of 1 s, not the default 2 s: each outage waits out two of them (the command's, the PING's).
    const watched = await connectRedis(own.url, "config.yaml", { ...commandOptions(), commandTimeout: 1000 });
    try {
      health.watch("commands", watched);
      const said = (text: string) => log.messages().filter((m) => m.includes(text)).length;
      for (const outage of [1, 2]) {
        own.freeze();
        const timedOut = await watched.get("k").catch((err: unknown) => err);
        expect(() => health.fail(timedOut)).toThrow(StateUnavailableError);
        // Logged once the confirming PING gets no answer in its 1 s either.
        await vi.waitFor(() => expect(said("is unreachable (Command timed out)")).toBe(outage), {
          timeout: 10_000,
          interval: 50,
        });
        own.thaw();
        await vi.waitFor(() => expect(said("is reachable again")).toBe(outage), { timeout: 10_000 });
      }
      expect(said("is unreachable")).toBe(2);
    } finally {
      own.thaw();
      watched.disconnect();
      await own.cleanup();
    }
  });

  it.concurrent("one command that got no answer in time while Redis was paused, on a connection that answers the PING after it, is no outage: answered 503, nothing logged", async () => {
    const own = await startTestRedis();
    const log = captureLogger();
    const health = createRedisHealth("test", log.logger);
    const watched = await connectRedis(own.url, "config.yaml", commandOptions());
    const admin = new Redis(own.url);
    try {
      health.watch("commands", watched);
      // Paused 2.5 s: the command's 2 s run out, and the PING sent then is answered within its own 2 s.
      await admin.call("CLIENT", "PAUSE", "2500", "ALL");
      const timedOut = await watched.get("k").catch((err: unknown) => err);
      expect(String(timedOut)).toContain("Command timed out");
      expect(() => health.fail(timedOut)).toThrow(StateUnavailableError);
      // A PING sent after the confirming one is answered after it: by then the confirmation is decided.
      await watched.ping();
      expect(log.messages().filter((m) => m.startsWith("[state]"))).toEqual([]);
      expect(health.inOutage()).toBe(false);
    } finally {
      admin.disconnect();
      watched.disconnect();
      await own.cleanup();
    }
  });

  it.concurrent("a reconnect the server turns away saying why (its maxclients reached) is logged with that reason and its fix, once per outage, not only as connection closed", async () => {
    const own = await startTestRedis({ args: ["--maxclients", "1"] });
    const holder = await connectRedis(own.url, "config.yaml", commandOptions());
    const log = captureLogger();
    const health = createRedisHealth("L", log.logger, Date.now, () =>
      serverGreeting({ host: "127.0.0.1", port: own.port }),
    );
    const watched = new Redis(own.url, commandOptions());
    try {
      health.watch("commands", watched);
      watched.connect().catch(() => {});
      const away = () => log.messages().filter((m) => m.includes("turned svc's connection away"));
      await vi.waitFor(() => expect(away()).toHaveLength(1), { timeout: 5000, interval: 50 });
      expect(away()[0]).toBe(
        "[state] Redis at L turned svc's connection away: L refuses new clients: it has as many as its maxclients allows (ERR max number of clients reached) — close the clients that hold its connections (CLIENT LIST shows them) or raise maxclients in its redis.conf (CONFIG SET maxclients for the running server); each gateway instance holds about 8",
      );
      expect(health.inOutage()).toBe(true);
      // Every reconnect is turned away the same: said once in the outage.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(away()).toHaveLength(1);
    } finally {
      watched.disconnect();
      holder.disconnect();
      await own.cleanup();
    }
  });

  it("an idle instance whose Redis was full (OOM) and has room again is marked available by its periodic check (a SET of a key of its own, sent only while writes are refused), not only at its own next write", async () => {
    const own = await startTestRedis();
    const log = captureLogger();
    const probeKey = redisKeys("idle").writeProbe("instance-1");
    const health = createRedisHealth("test", log.logger, undefined, undefined, probeKey);
    const watched = await connectRedis(own.url, "config.yaml", commandOptions());
    const admin = new Redis(own.url);
    /** How often Redis was sent a SET (taken and refused). */
    const sets = async () => {
      const info = await admin.info("commandstats");
      const line = /^cmdstat_set:(.*)$/m.exec(info)?.[1] ?? "";
      const count = (name: string) => Number(new RegExp(`${name}=(\\d+)`).exec(line)?.[1] ?? 0);
      return count("calls") + count("rejected_calls");
    };
    vi.useFakeTimers({ toFake: ["setInterval"] });
    try {
      const said = (text: string) => log.messages().filter((m) => m.includes(text)).length;
      health.watch("commands", watched);
      await health.keepAlive(async () => undefined);
      const seen = createSharedIdempotency(watched, redisKeys("idle"), health);
      await admin.config("RESETSTAT");
      // Healthy: the check is a PING alone.
      await vi.advanceTimersByTimeAsync(LIVENESS_PING_MS);
      await watched.ping();
      expect(await sets()).toBe(0);
      await admin.config("SET", "maxmemory", "1");
      await expect(seen.checkAndAdd("r:1")).rejects.toBeInstanceOf(StateUnavailableError);
      expect(health.refusing()).toBe(true);
      await admin.config("RESETSTAT");
      // Still full: the check's write is refused, and the instance stays marked refusing.
      await vi.advanceTimersByTimeAsync(LIVENESS_PING_MS);
      await vi.waitFor(async () => expect(await sets()).toBe(1), { timeout: 2000, interval: 20 });
      expect(health.refusing()).toBe(true);
      // Room again, and no request comes: the next check's write is taken.
      await admin.config("SET", "maxmemory", "0");
      await vi.advanceTimersByTimeAsync(LIVENESS_PING_MS);
      await vi.waitFor(() => expect(health.refusing()).toBe(false), { timeout: 2000, interval: 20 });
      expect(said("takes writes again")).toBe(1);
      expect(log.messages().find((m) => m.includes("takes writes again"))).toContain("requests are served");
      // Its key expires by itself: nothing of it is left behind.
      expect(await admin.pttl(probeKey)).toBeLessThanOrEqual(1000);
      // Healthy again: no further SET.
      await vi.advanceTimersByTimeAsync(LIVENESS_PING_MS);
      await watched.ping();
      expect(await sets()).toBe(2);
      expect(said("is unreachable")).toBe(0);
    } finally {
      vi.useRealTimers();
      admin.disconnect();
      watched.disconnect();
      await own.cleanup();
    }
  });

  it("a Redis that stops answering while no request comes (frozen, or its host gone without closing the connection) is noticed by a PING every few seconds: unavailable, logged once, and back once it answers", async () => {
    const own = await startTestRedis();
    const log = captureLogger();
    const health = createRedisHealth("test", log.logger);
    const watched = await connectRedis(own.url, "config.yaml", { ...commandOptions(), commandTimeout: 1000 });
    // The PING's own timeout (the connection's, 1 s here) and the probe after it run on the real clock.
    vi.useFakeTimers({ toFake: ["setInterval"] });
    try {
      const said = (text: string) => log.messages().filter((m) => m.includes(text)).length;
      health.watch("commands", watched);
      // A server whose timeout closes no idle client (Redis's default): no keep-alive PING of its own.
      await health.keepAlive(async () => undefined);
      own.freeze();
      await vi.advanceTimersByTimeAsync(LIVENESS_PING_MS);
      await vi.waitFor(() => expect(health.inOutage()).toBe(true), { timeout: 5000, interval: 50 });
      expect(said("is unreachable (Command timed out)")).toBe(1);
      await vi.advanceTimersByTimeAsync(LIVENESS_PING_MS);
      own.thaw();
      await vi.waitFor(() => expect(health.inOutage()).toBe(false), { timeout: 5000, interval: 50 });
      expect(said("is unreachable")).toBe(1);
      expect(said("is reachable again")).toBe(1);
    } finally {
      own.thaw();
      vi.useRealTimers();
      watched.disconnect();
      await own.cleanup();
    }
  });
});
