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
 * This process's clock runs `ms` ahead of Redis's from here on (a host whose clock drifted): only Date is
 * faked, and it keeps moving with the real time; timers (BullMQ's, svc's) stay real.
 */
function runAhead(ms: number): void {
  vi.useFakeTimers({ toFake: ["Date"], shouldAdvanceTime: true, advanceTimeDelta: 10 });
  vi.setSystemTime(Date.now() + ms);
}

type Data = { n: number; kept?: true; done?: true };

/**
 * One instance of a queue whose job 1 releases its slot (its delivery waits to retry) and goes on until
 * `goOn`; `seen` records the data of each run of it. The lease is 6 s (30 s by default), renewed every 2 s.
 */
function releasing() {
  const keys = redisKeys(`ca${randomUUID()}`);
  const seen: Data[] = [];
  let goOn: () => void = () => {};
  const going = new Promise<void>((resolve) => {
    goOn = resolve;
  });
  let released = false;
  const queue = createSharedQueue<Data>({
    url: own.server.url,
    name: "runs",
    keys,
    health: createRedisHealth("test", silentLogger()),
    logger: silentLogger(),
    concurrency: 1,
    // Past a few copies a release keeps its slot: the job's copies would stop there.
    outsideCap: 5,
    stall: { lockDurationMs: 6000, stalledIntervalMs: 500 },
    async process(data, _signal, _job, _token, slot) {
      seen.push(data);
      if (data.done === true || data.kept === true) return;
      released = await slot.release({ ...data, kept: true }, { ...data, done: true });
      await going;
    },
  });
  const id = jobIdOf("hook:1");
  const job = `${keys.bullPrefix()}:runs:${id}`;
  /** The due time of the released job in Redis (epoch ms), null when it is not delayed. */
  const dueAt = async () => {
    const score = await own.redis.zscore(`${keys.bullPrefix()}:runs:delayed`, id);
    return score === null ? null : Math.floor(Number(score) / 0x1000);
  };
  /** How many times a worker took the job (BullMQ's attempts started). */
  const taken = async () => Number(await own.redis.hget(job, "ats"));
  return { queue, id, seen, dueAt, taken, goOn: () => goOn(), released: () => released };
}

describe("an instance whose clock runs ahead of Redis's by more than the lease (state.backend: redis)", {
  timeout: 30_000,
}, () => {
  it("does not take back the delivery it holds waiting to retry, through its lease's renewals: run once with what it goes on with, finished once", async () => {
    const { queue, id, seen, dueAt, taken, goOn, released } = releasing();
    runAhead(50_000);
    try {
      await queue.enqueue("hook:1", { n: 1 });
      queue.start();
      await vi.waitFor(() => expect(released()).toBe(true), { timeout: 10_000, interval: 10 });
      // Its lease renewed twice (every 2 s): each time due a lease from now on this instance's clock, which is
      // ahead of Redis's, so its own worker does not find it due (before, due at once: taken back, released
      // again, about 1000 times, each copy delivering the reply).
      const due: number[] = [];
      await vi.waitFor(
        async () => {
          const at = await dueAt();
          expect(at).not.toBeNull();
          if (at !== null && !due.includes(at)) due.push(at);
          expect(due.length).toBeGreaterThanOrEqual(3);
        },
        { timeout: 10_000, interval: 50 },
      );
      expect(await dueAt()).toBeGreaterThan(Date.now());
      expect(await taken()).toBe(1);
      expect(seen).toEqual([{ n: 1 }]);
      goOn();
      await vi.waitFor(async () => expect(await queue.queue.getJobState(id)).toBe("completed"), {
        timeout: 10_000,
        interval: 20,
      });
      // Finished with its done mark; what it went on with was never run again.
      expect(seen).toEqual([{ n: 1 }, { n: 1, done: true }]);
      expect(await taken()).toBe(2);
    } finally {
      goOn();
      vi.useRealTimers();
      await queue.close(1000);
    }
  });

  it("whose worker takes the delivery it holds (its lease found due: a clock stepped forward past it) gives it back unrun, set aside for a lease again: run once with what it goes on with, finished once", async () => {
    const { queue, id, seen, dueAt, taken, goOn, released } = releasing();
    try {
      await queue.enqueue("hook:1", { n: 1 });
      queue.start();
      await vi.waitFor(() => expect(released()).toBe(true), { timeout: 10_000, interval: 10 });
      // Let run now, as a worker whose clock reached its due time would take it.
      await (await queue.queue.getJob(id))?.promote();
      await vi.waitFor(async () => expect(await taken()).toBe(2), { timeout: 10_000, interval: 10 });
      await vi.waitFor(async () => expect(await dueAt()).not.toBeNull(), { timeout: 10_000, interval: 10 });
      expect(seen).toEqual([{ n: 1 }]);
      goOn();
      await vi.waitFor(async () => expect(await queue.queue.getJobState(id)).toBe("completed"), {
        timeout: 10_000,
        interval: 20,
      });
      expect(seen).toEqual([{ n: 1 }, { n: 1, done: true }]);
    } finally {
      goOn();
      await queue.close(1000);
    }
  });
});
