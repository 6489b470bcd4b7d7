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

type Data = { n: string; kept?: true; done?: true };

/**
 * Instances of one shared queue whose jobs wait at gates the test opens: `hold` is delivered once, released
 * outside its slot to wait for its retry (stored reply `kept`), and retried by its holder once its gate opens;
 * a stored reply run by anyone is recorded as such. A 6 s lease (30 s by default), renewed every 2 s.
 */
function holdingInstances(keys: ReturnType<typeof redisKeys>) {
  const deliveries: string[] = [];
  const gates = new Map<string, () => void>();
  const gate = (n: string) =>
    new Promise<void>((resolve) => {
      gates.set(n, resolve);
    });
  const open = (n: string) => gates.get(n)?.();
  const make = (by: string, concurrency: number) =>
    createSharedQueue<Data>({
      url: own.server.url,
      name: "runs",
      keys,
      health: createRedisHealth("test", silentLogger()),
      logger: silentLogger(),
      concurrency,
      stall: { lockDurationMs: 6000, stalledIntervalMs: 500 },
      async process(data, _signal, _job, _token, slot) {
        if (data.done === true) return;
        if (data.kept === true) {
          deliveries.push(`${by}:${data.n} (stored reply)`);
          return;
        }
        if (data.n !== "hold") return gate(`${by}:${data.n}`);
        deliveries.push(`${by}:hold first attempt`);
        await slot.release({ ...data, kept: true }, { ...data, done: true });
        await gate("hold");
        deliveries.push(`${by}:hold retry delivered by its holder`);
      },
    });
  return { deliveries, gates, open, make };
}

describe("a delivery waiting to retry outside its slot, taken by another instance while its holder delivers it (state.backend: redis)", {
  timeout: 30_000,
}, () => {
  it("is given back unrun under its lease when its holder's clock stepped forward past the lease put it in the shared wait list: delivered once, by its holder, and finished", async () => {
    const keys = redisKeys(`ho${randomUUID()}`);
    const { deliveries, gates, open, make } = holdingInstances(keys);
    const [a, b] = [make("A", 1), make("B", 1)];
    const hold = jobIdOf("hook:hold");
    const delayedKey = `${keys.bullPrefix()}:runs:delayed`;
    const state = (key: string) => a.queue.getJobState(jobIdOf(key));
    try {
      await a.enqueue("hook:hold", { n: "hold" });
      a.start();
      await vi.waitFor(() => expect(deliveries).toEqual(["A:hold first attempt"]), {
        timeout: 10_000,
        interval: 10,
      });
      await vi.waitFor(async () => expect(await state("hook:hold")).toBe("delayed"), {
        timeout: 10_000,
        interval: 10,
      });
      // A's slot is free: it takes busyA, which goes on; w1 waits behind it.
      await a.enqueue("hook:busyA", { n: "busyA" });
      await vi.waitFor(() => expect(gates.has("A:busyA")).toBe(true), { timeout: 10_000, interval: 10 });
      await a.enqueue("hook:w1", { n: "w1" });
      // Right after a renewal of hold's lease (its due time moved), A's clock steps forward past the lease
      // and busyA ends: A's worker, fetching its next job, finds hold due on its clock and moves it to the
      // wait list, where it takes w1 (the oldest) and leaves hold to any instance.
      const first = await own.redis.zscore(delayedKey, hold);
      await vi.waitFor(async () => expect(await own.redis.zscore(delayedKey, hold)).not.toBe(first), {
        timeout: 10_000,
        interval: 10,
      });
      vi.useFakeTimers({ toFake: ["Date"], shouldAdvanceTime: true, advanceTimeDelta: 10 });
      vi.setSystemTime(Date.now() + 60_000);
      open("A:busyA");
      await vi.waitFor(() => expect(gates.has("A:w1")).toBe(true), { timeout: 10_000, interval: 10 });
      expect(await state("hook:hold")).toBe("waiting");
      // A's clock right again; B starts and takes hold from the wait list.
      vi.useRealTimers();
      b.start();
      await vi.waitFor(
        async () => {
          expect(Number(await own.redis.hget(`${keys.bullPrefix()}:runs:${hold}`, "ats"))).toBe(2);
          expect(await state("hook:hold")).not.toBe("active");
        },
        { timeout: 10_000, interval: 10 },
      );
      // Given back unrun, set aside for the rest of the lease its holder renews.
      expect(deliveries).toEqual(["A:hold first attempt"]);
      expect(await state("hook:hold")).toBe("delayed");
      open("hold");
      await vi.waitFor(async () => expect(await state("hook:hold")).toBe("completed"), {
        timeout: 10_000,
        interval: 20,
      });
      expect(deliveries).toEqual(["A:hold first attempt", "A:hold retry delivered by its holder"]);
    } finally {
      vi.useRealTimers();
      for (const resolve of gates.values()) resolve();
      await Promise.all([a.close(1000), b.close(1000)]);
    }
  });

  it("taken by a fetch under way as another instance's stop drains is given back under its holder's lease, not made due at once", async () => {
    const keys = redisKeys(`ho${randomUUID()}`);
    const { deliveries, gates, open, make } = holdingInstances(keys);
    // B has a slot free while it runs y, so its worker waits for a job as its stop begins.
    const [a, b] = [make("A", 1), make("B", 2)];
    const hold = jobIdOf("hook:hold");
    const state = (key: string) => a.queue.getJobState(jobIdOf(key));
    /** How long until hold is due, on Redis's clock (ms). */
    const dueIn = async () => {
      const score = await own.redis.zscore(`${keys.bullPrefix()}:runs:delayed`, hold);
      const [seconds, micros] = await own.redis.time();
      return (
        Math.floor(Number(score) / 0x1000) - (Number(seconds) * 1000 + Math.floor(Number(micros) / 1000))
      );
    };
    let closing: Promise<void> | undefined;
    try {
      await a.enqueue("hook:hold", { n: "hold" });
      a.start();
      await vi.waitFor(async () => expect(await state("hook:hold")).toBe("delayed"), {
        timeout: 10_000,
        interval: 10,
      });
      await a.enqueue("hook:busyA", { n: "busyA" });
      await vi.waitFor(() => expect(gates.has("A:busyA")).toBe(true), { timeout: 10_000, interval: 10 });
      b.start();
      await b.enqueue("hook:y", { n: "y" });
      await vi.waitFor(() => expect(gates.has("B:y")).toBe(true), { timeout: 10_000, interval: 10 });
      // B's worker waits for a job (the only client blocked: A's one slot is taken).
      await vi.waitFor(
        async () => expect(await own.redis.info("clients")).toMatch(/blocked_clients:1\r?\n/),
        {
          timeout: 10_000,
          interval: 10,
        },
      );
      // B's stop begins (its drain waits for y), and hold is let run, as a worker whose clock read its lease
      // over would take it: the fetch B's worker had under way takes it.
      closing = b.close(20_000);
      await (await a.queue.getJob(hold))?.promote();
      await vi.waitFor(
        async () => {
          expect(Number(await own.redis.hget(`${keys.bullPrefix()}:runs:${hold}`, "ats"))).toBe(2);
          expect(await state("hook:hold")).toBe("delayed");
        },
        { timeout: 10_000, interval: 10 },
      );
      // Set aside for the rest of its lease (6 s less at most 2 s since its last renewal), not due at once.
      expect(await dueIn()).toBeGreaterThan(3000);
      expect(deliveries).toEqual(["A:hold first attempt"]);
      open("B:y");
      await closing;
      open("hold");
      open("A:busyA");
      await vi.waitFor(async () => expect(await state("hook:hold")).toBe("completed"), {
        timeout: 10_000,
        interval: 20,
      });
      expect(deliveries).toEqual(["A:hold first attempt", "A:hold retry delivered by its holder"]);
    } finally {
      for (const resolve of gates.values()) resolve();
      await Promise.all([a.close(1000), closing ?? b.close(1000)]);
    }
  });
});
