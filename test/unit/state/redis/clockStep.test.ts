import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it, vi } from "vitest";
import { silentLogger } from "../../../../src/io/log.js";
import { createRedisHealth } from "../../../../src/io/state/redis/connection.js";
import { redisKeys } from "../../../../src/io/state/redis/keys.js";
import { createSharedQueue, jobIdOf } from "../../../../src/io/state/redis/sharedQueue.js";
import { redisPerFile } from "../../../helpers/redisPerFile.js";

const own = redisPerFile();

afterEach(() => {
  vi.useRealTimers();
});

/**
 * The system clock stepped by `ms` (NTP, a VM resumed) while time goes on: only Date is faked, and it keeps
 * moving with the real time from where the step put it; timers (BullMQ's, svc's) stay real.
 */
function stepClock(ms: number): void {
  vi.useFakeTimers({ toFake: ["Date"], shouldAdvanceTime: true, advanceTimeDelta: 10 });
  vi.setSystemTime(Date.now() + ms);
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("a clock step on an instance of a shared queue (state.backend: redis)", { timeout: 30_000 }, () => {
  it("set back while it runs a job does not let the job's lock expire: no other instance (nor this one) runs it again, and its end is recorded", async () => {
    const keys = redisKeys(`cs${randomUUID()}`);
    const seen: string[] = [];
    const notRecorded: string[] = [];
    let goOn: () => void = () => {};
    const going = new Promise<void>((resolve) => {
      goOn = resolve;
    });
    // A 1 s lock (30 s by default), looked after every 0.3 s: a lock not renewed for a second is lost.
    const stall = { lockDurationMs: 1000, stalledIntervalMs: 300 };
    const make = (by: string) =>
      createSharedQueue<{ n: number }>({
        url: own.server.url,
        name: "runs",
        keys,
        health: createRedisHealth("test", silentLogger()),
        logger: silentLogger(),
        concurrency: 2,
        stall,
        async process() {
          seen.push(by);
          await going;
        },
        notRecorded(_data, err) {
          notRecorded.push(err);
        },
      });
    const [a, b] = [make("a"), make("b")];
    try {
      await a.enqueue("hook:1", { n: 1 });
      a.start();
      await vi.waitFor(() => expect(seen).toEqual(["a"]), { timeout: 10_000, interval: 10 });
      b.start();
      // Ten lock times back: BullMQ's own renewal waited for the clock to come round to its last renewal.
      stepClock(-10_000);
      await pause(3000);
      expect(seen).toEqual(["a"]);
      goOn();
      await vi.waitFor(async () => expect(await a.queue.getJobState(jobIdOf("hook:1"))).toBe("completed"), {
        timeout: 10_000,
        interval: 20,
      });
      expect(seen).toEqual(["a"]);
      expect(notRecorded).toEqual([]);
    } finally {
      goOn();
      vi.useRealTimers();
      await Promise.all([a.close(1000), b.close(1000)]);
    }
  });

  /**
   * A queue whose job 1, run by `a`, releases its slot (its delivery waits to retry) with the clock stepped by
   * `stepMs` as it does, the clock right again after; `seen` records who ran what. The lease is 6 s (30 s by
   * default), renewed every 2 s.
   */
  function releasedWithStep(stepMs: number) {
    type Data = { n: number; kept?: true; done?: true };
    const keys = redisKeys(`cs${randomUUID()}`);
    const seen: Array<{ by: string; data: Data }> = [];
    let goOn: () => void = () => {};
    const going = new Promise<void>((resolve) => {
      goOn = resolve;
    });
    let released = false;
    const make = (by: string) =>
      createSharedQueue<Data>({
        url: own.server.url,
        name: "runs",
        keys,
        health: createRedisHealth("test", silentLogger()),
        logger: silentLogger(),
        concurrency: 1,
        stall: { lockDurationMs: 6000, stalledIntervalMs: 500 },
        async process(data, _signal, _job, _token, slot) {
          seen.push({ by, data });
          if (data.done === true || data.kept === true) return;
          stepClock(stepMs);
          try {
            released = await slot.release({ ...data, kept: true }, { ...data, done: true });
          } finally {
            vi.useRealTimers();
          }
          await going;
        },
      });
    const [a, b] = [make("a"), make("b")];
    /** How long until the released job is due, on Redis's clock (ms). */
    const dueIn = async () => {
      const score = await own.redis.zscore(`${keys.bullPrefix()}:runs:delayed`, jobIdOf("hook:1"));
      const [seconds, micros] = await own.redis.time();
      return (
        Math.floor(Number(score) / 0x1000) - (Number(seconds) * 1000 + Math.floor(Number(micros) / 1000))
      );
    };
    return { a, b, seen, dueIn, goOn: () => goOn(), released: () => released };
  }

  it("that leaves its clock behind Redis's as a delivery waiting to retry is set aside, its lease is not over at once for the other instances: none takes the job over while it waits here", async () => {
    const { a, b, seen, dueIn, goOn, released } = releasedWithStep(-60_000);
    try {
      await a.enqueue("hook:1", { n: 1 });
      a.start();
      await vi.waitFor(() => expect(released()).toBe(true), { timeout: 10_000, interval: 10 });
      // Set aside, due a lease from now on Redis's clock, not a minute ago (this worker took it again at once).
      expect(await a.queue.getJobState(jobIdOf("hook:1"))).toBe("delayed");
      expect(await dueIn()).toBeGreaterThan(5000);
      expect(await dueIn()).toBeLessThanOrEqual(6000);
      b.start();
      await pause(1500);
      expect(seen.map((s) => s.by)).toEqual(["a"]);
      goOn();
      await vi.waitFor(async () => expect(await a.queue.getJobState(jobIdOf("hook:1"))).toBe("completed"), {
        timeout: 10_000,
        interval: 20,
      });
      expect(seen.slice(1).map((s) => s.data)).toEqual([{ n: 1, done: true }]);
    } finally {
      goOn();
      vi.useRealTimers();
      await Promise.all([a.close(1000), b.close(1000)]);
    }
  });

  it("that leaves its clock ahead of Redis's as a delivery waiting to retry is set aside, its lease ends a lease from now on its own clock, which its own worker reads (so it does not take the job back), and once its clock is right again a lease from now on Redis's clock from its next renewal: another instance would not wait that much longer for it once this one died", async () => {
    const { a, b, dueIn, goOn, released } = releasedWithStep(60_000);
    try {
      await a.enqueue("hook:1", { n: 1 });
      a.start();
      await vi.waitFor(() => expect(released()).toBe(true), { timeout: 10_000, interval: 10 });
      // Set aside as its clock read a minute ahead: a lease from then on that clock.
      expect(await dueIn()).toBeGreaterThan(60_000);
      // The stepped clock advances in 10 ms steps (advanceTimeDelta), so it may read up to 10 ms ahead of itself.
      expect(await dueIn()).toBeLessThanOrEqual(66_010);
      // Renewed (every 2 s) with its clock right again: a lease from now on Redis's clock.
      await vi.waitFor(async () => expect(await dueIn()).toBeLessThanOrEqual(6000), {
        timeout: 10_000,
        interval: 50,
      });
      expect(await dueIn()).toBeGreaterThan(5000);
    } finally {
      goOn();
      vi.useRealTimers();
      await Promise.all([a.close(1000), b.close(1000)]);
    }
  });
  it("hands a delivery waiting to retry on at its stop at once, telling when the retry is due on Redis's clock: an instance a minute ahead reads it a minute later on its clock, so it neither goes out early nor waits longer", async () => {
    type Data = { n: number; kept?: true; done?: true; dueAt?: number; dueOnRedis?: number };
    const keys = redisKeys(`cs${randomUUID()}`);
    let released = false;
    /** How long the instance that takes the job over has left to wait, on its own clock (ms). */
    let left: number | undefined;
    const make = () =>
      createSharedQueue<Data>({
        url: own.server.url,
        name: "runs",
        keys,
        health: createRedisHealth("test", silentLogger()),
        logger: silentLogger(),
        concurrency: 1,
        handedOn: (data, redisAhead) => ({ ...data, dueOnRedis: (data.dueAt ?? 0) + redisAhead }),
        async process(data, signal, _job, _token, slot) {
          if (data.kept === true) {
            left = (await slot.fromRedisClock(data.dueOnRedis ?? 0)) - Date.now();
            return;
          }
          // Its retry due a minute from now on this instance's clock; its wait ends only with the stop.
          const dueAt = Date.now() + 60_000;
          released = await slot.release({ ...data, kept: true, dueAt }, { ...data, done: true }, dueAt);
          await new Promise((_resolve, reject) =>
            signal.addEventListener("abort", () => reject(signal.reason)),
          );
        },
      });
    const [a, b] = [make(), make()];
    try {
      // The instance that stops runs a minute behind Redis.
      stepClock(-60_000);
      await a.enqueue("hook:1", { n: 1 });
      a.start();
      await vi.waitFor(() => expect(released).toBe(true), { timeout: 10_000, interval: 10 });
      await a.close(0);
      vi.useRealTimers();
      // Taken at once by the next instance, not left delayed until the retry is due.
      expect(await b.queue.getJobState(jobIdOf("hook:1"))).toBe("waiting");
      // The one that takes it runs a minute ahead of Redis.
      stepClock(60_000);
      b.start();
      await vi.waitFor(() => expect(left).toBeDefined(), { timeout: 10_000, interval: 10 });
      // What is left of the minute on Redis's clock (the stop, the start and the take in between).
      expect(left).toBeGreaterThan(50_000);
      expect(left).toBeLessThanOrEqual(60_000);
    } finally {
      vi.useRealTimers();
      await Promise.all([a.close(1000), b.close(1000)]);
    }
  });
});

describe("the lock of a job an instance runs (state.backend: redis)", { timeout: 30_000 }, () => {
  it("is renewed every 2 s, not every quarter lock: a 30 s lock has 28 s left at worst when Redis freezes or goes away", async () => {
    const keys = redisKeys(`lr${randomUUID()}`);
    let goOn: () => void = () => {};
    const going = new Promise<void>((resolve) => {
      goOn = resolve;
    });
    let started = false;
    const queue = createSharedQueue<{ n: number }>({
      url: own.server.url,
      name: "runs",
      keys,
      health: createRedisHealth("test", silentLogger()),
      logger: silentLogger(),
      concurrency: 1,
      async process() {
        started = true;
        await going;
      },
    });
    const lock = `${keys.bullPrefix()}:runs:${jobIdOf("hook:1")}:lock`;
    // Only the renewal's interval is simulated; BullMQ's timers and Redis's clock go on as they do.
    vi.useFakeTimers({ toFake: ["setInterval"] });
    try {
      await queue.enqueue("hook:1", { n: 1 });
      queue.start();
      await vi.waitFor(() => expect(started).toBe(true), { timeout: 10_000, interval: 10 });
      await pause(50);
      const before = await own.redis.pttl(lock);
      expect(before).toBeGreaterThan(0);
      await vi.advanceTimersByTimeAsync(2000);
      // Renewed after `before` was read: back up towards the whole 30 s.
      await vi.waitFor(async () => expect(await own.redis.pttl(lock)).toBeGreaterThan(before), {
        timeout: 5000,
        interval: 10,
      });
    } finally {
      goOn();
      vi.useRealTimers();
      await queue.close(1000);
    }
  });
});
