import { randomUUID } from "node:crypto";
import { describe, expect, it, vi } from "vitest";
import { createRedisHealth } from "../../../../src/io/state/redis/connection.js";
import { redisKeys } from "../../../../src/io/state/redis/keys.js";
import { createSharedQueue, jobIdOf, type SharedQueue } from "../../../../src/io/state/redis/sharedQueue.js";
import { captureLogger } from "../../../fakes/logCapture.js";
import { redisPerFile } from "../../../helpers/redisPerFile.js";

// A Redis of the file's own: the tests make it refuse writes (maxmemory).
const own = redisPerFile({ roomAfterEach: true });

type Data = { n: number; kept?: true; done?: true };

/**
 * A queue whose job 1 releases its slot (kept: what another instance would deliver) and goes on until
 * `goOn`; `seen` records each data `process` ran with. The lease is 6 s (30 s by default), renewed every 2 s;
 * the `done` mark is written again every second while Redis does not take it.
 */
function releasingQueue(keys: ReturnType<typeof redisKeys>) {
  const log = captureLogger();
  const seen: Data[] = [];
  const notRecorded: Array<{ data: Data; err: string }> = [];
  let goOn: () => void = () => {};
  const going = new Promise<void>((resolve) => {
    goOn = resolve;
  });
  let released = false;
  const queue: SharedQueue<Data> = createSharedQueue<Data>({
    url: own.server.url,
    name: "runs",
    keys,
    health: createRedisHealth("test", log.logger),
    logger: log.logger,
    concurrency: 1,
    stall: { lockDurationMs: 6000, stalledIntervalMs: 500 },
    async process(data, _signal, _job, _token, slot) {
      seen.push(data);
      if (data.done === true || data.kept === true) return;
      released = await slot.release({ ...data, kept: true }, { ...data, done: true });
      await going;
    },
    notRecorded(data, err) {
      notRecorded.push({ data, err });
    },
  });
  return { queue, log, seen, notRecorded, goOn: () => goOn(), released: () => released };
}

describe("a job released from its slot whose end Redis does not take at once (state.backend: redis)", {
  timeout: 30_000,
}, () => {
  it("keeps its done mark and its lease while Redis refuses writes (full: OOM), writes it once Redis has room, and is finished without its stored reply being delivered again", async () => {
    const keys = redisKeys(`dm${randomUUID()}`);
    const { queue, log, seen, goOn, released } = releasingQueue(keys);
    const notWritten = () =>
      log.messages().filter((m) => m === "[state] done mark not written; written again");
    try {
      await queue.enqueue("hook:1", { n: 1 });
      queue.start();
      await vi.waitFor(() => expect(released()).toBe(true), { timeout: 10_000, interval: 10 });
      // Full at the moment of the delivery: its end (the done mark) is refused.
      await own.redis.config("SET", "maxmemory", "1");
      goOn();
      // Refused, then written again a second later, refused again: it is not given up after one try.
      await vi.waitFor(() => expect(notWritten().length).toBeGreaterThanOrEqual(2), {
        timeout: 10_000,
        interval: 20,
      });
      expect(await queue.queue.getJobState(jobIdOf("hook:1"))).toBe("delayed");
      await own.redis.config("SET", "maxmemory", "0");
      await vi.waitFor(
        async () => expect(await queue.queue.getJobState(jobIdOf("hook:1"))).toBe("completed"),
        {
          timeout: 10_000,
          interval: 20,
        },
      );
      // Finished with its done mark: the kept reply was never taken up to be delivered again.
      expect(seen).toEqual([{ n: 1 }, { n: 1, done: true }]);
      expect(log.messages().filter((m) => /its end was not recorded/.test(m))).toEqual([]);
      expect(queue.outside()).toBe(0);
    } finally {
      await queue.close(1000);
    }
  });

  it("whose job is gone from Redis (restarted empty, flushed or evicted) is told to notRecorded with what it went on with and the Missing key error, as a run in a slot is — not said to run again", async () => {
    const keys = redisKeys(`dm${randomUUID()}`);
    const { queue, log, notRecorded, goOn, released } = releasingQueue(keys);
    try {
      await queue.enqueue("hook:2", { n: 2 });
      queue.start();
      await vi.waitFor(() => expect(released()).toBe(true), { timeout: 10_000, interval: 10 });
      await own.redis.del(`${keys.bullPrefix()}:runs:${jobIdOf("hook:2")}`);
      goOn();
      await vi.waitFor(() => expect(notRecorded).toHaveLength(1), { timeout: 10_000, interval: 20 });
      expect(notRecorded[0]).toEqual({
        data: { n: 2, kept: true },
        err: `Missing key for job ${jobIdOf("hook:2")}. updateData`,
      });
      await vi.waitFor(() => expect(queue.outside()).toBe(0), { timeout: 10_000, interval: 20 });
      expect(log.messages().filter((m) => /runs again once its lease is over/.test(m))).toEqual([]);
    } finally {
      await queue.close(1000);
    }
  });
});
