import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { silentLogger } from "../../../../src/io/log.js";
import { createRedisHealth } from "../../../../src/io/state/redis/connection.js";
import { redisKeys } from "../../../../src/io/state/redis/keys.js";
import { createSharedQueue } from "../../../../src/io/state/redis/sharedQueue.js";
import { startTestRedis, type TestRedis } from "../../../helpers/redis.js";

/**
 * A worker whose every fetch Redis refuses (full: OOM, which refuses BullMQ's scripts). BullMQ asks again at
 * once after a refusal (it waits only after a connection error), so each instance's workers asked in a loop,
 * a CPU core each, for as long as Redis stayed full.
 */

let server: TestRedis;
let admin: Redis;
beforeAll(async () => {
  server = await startTestRedis();
  admin = new Redis(server.url);
});
afterAll(async () => {
  admin.disconnect();
  await server.cleanup();
});

const oomRefusals = async (): Promise<number> =>
  Number(/^errorstat_OOM:count=(\d+)/m.exec(await admin.info("errorstats"))?.[1] ?? 0);

describe("a worker on a full Redis", { timeout: 30_000 }, () => {
  it("asks again about once a second, not in a loop, and runs the jobs once Redis has room", async () => {
    const prefix = `w${randomUUID().slice(0, 8)}`;
    const ran: number[] = [];
    const queue = createSharedQueue<{ n: number }>({
      url: server.url,
      name: "runs",
      keys: redisKeys(prefix),
      health: createRedisHealth("redis://127.0.0.1/0", silentLogger()),
      logger: silentLogger(),
      concurrency: 1,
      async process(data) {
        ran.push(data.n);
      },
    });
    try {
      await queue.enqueue("hook:1", { n: 1 });
      // Full: more data than its maxmemory, which noeviction (the default) keeps and refuses writes for.
      await admin.set(`${prefix}:ballast`, "x".repeat(2_000_000));
      await admin.config("SET", "maxmemory", "1mb");
      await admin.config("RESETSTAT");
      queue.start();
      await new Promise((resolve) => setTimeout(resolve, 2000));
      // A loop makes thousands in these 2 s; about one a second per fetch is what is asked of it.
      expect(await oomRefusals()).toBeGreaterThan(0);
      expect(await oomRefusals()).toBeLessThan(20);
      expect(ran).toEqual([]);
      await admin.config("SET", "maxmemory", "0");
      await vi.waitFor(() => expect(ran).toEqual([1]), { timeout: 10_000, interval: 50 });
    } finally {
      await admin.config("SET", "maxmemory", "0");
      await queue.close(0);
    }
  });
});
