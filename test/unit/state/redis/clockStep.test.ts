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
});
