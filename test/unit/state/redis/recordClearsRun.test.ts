import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { QueuedRun } from "../../../../src/actors/runs.js";
import { silentLogger } from "../../../../src/io/log.js";
import { redisKeys } from "../../../../src/io/state/redis/keys.js";
import { openRedisState, type RedisState } from "../../../../src/state/redisState.js";
import type { AcceptedEvent, ResolvedRoute } from "../../../../src/streams/context.js";
import { pendingRun } from "../../../helpers/pendingRun.js";
import { startTestRedis, type TestRedis } from "../../../helpers/redis.js";

let server: TestRedis;
let raw: Redis;
beforeAll(async () => {
  server = await startTestRedis();
  raw = new Redis(server.url);
});
afterAll(async () => {
  raw.disconnect();
  await server.cleanup();
});

describe("state.backend: redis — an agent route's idempotency record clears the way for its run (one command, not two)", () => {
  it("a redelivery after the id's hour runs again and a retry within it does not, as when the enqueue cleared the way itself; only an agent route's record sets the add mark", async () => {
    const prefix = `rc${Date.now()}`;
    const keys = redisKeys(prefix);
    const ran: QueuedRun[] = [];
    const routes: Record<string, unknown> = {
      pr: { name: "pr", profile: "default", secret: "s", route: { prompt: "p", deliver: "log" } },
      dd: { name: "dd", profile: "default", secret: "s", route: { deliver: "log", deliver_only: true } },
      grp: {
        name: "grp",
        profile: "default",
        secret: "s",
        route: { prompt: "p", deliver: "log", coalesce: { key: "{x}", window_seconds: 5 } },
      },
    };
    const state: RedisState = await openRedisState({
      settings: { backend: "redis", redis_url: server.url, redis_key_prefix: prefix } as never,
      configFile: "config.yaml",
      logger: silentLogger(),
      maxConcurrentRuns: 1,
      rateLimit: 1000,
      elapsed: () => 0,
      lookup: (name) => routes[name] as ResolvedRoute | undefined,
      async execute(run) {
        ran.push(run);
      },
    });
    const accepted = (deliveryId: string) =>
      ({
        ...pendingRun(deliveryId),
        route: { prompt: "p", deliver: "log" },
        payload: {},
        headers: {},
      }) as unknown as AcceptedEvent;
    /** A request of delivery `id` to route pr, as the pipeline makes it: its record, then (when new) its run. */
    const request = async (id: string) => {
      if (await state.seen.checkAndAdd(`pr:${id}`)) return "duplicate";
      await state.enqueueRun(accepted(id));
      await state.seen.keep(`pr:${id}`);
      return "accepted";
    };
    /** What Redis does an hour after the event: its record and its add mark expire. */
    const hourOver = (key: string) => raw.del(keys.seen(key), keys.added(key));
    try {
      state.start();
      expect(await request("1")).toBe("accepted");
      await vi.waitFor(() => expect(ran).toHaveLength(1), { timeout: 15_000, interval: 20 });
      expect(await raw.pttl(keys.added("pr:1"))).toBeGreaterThan(3_500_000);
      expect(await raw.ttl(keys.seen("pr:1"))).toBeGreaterThan(3500);
      expect(await request("1")).toBe("duplicate");
      // Its record forgotten within the hour (a 503 of a retry whose add had gone through): not run again.
      await raw.del(keys.seen("pr:1"));
      expect(await request("1")).toBe("accepted");
      // The hour over: a redelivery under the same id, which runs.
      await hourOver("pr:1");
      expect(await request("1")).toBe("accepted");
      await vi.waitFor(() => expect(ran).toHaveLength(2), { timeout: 15_000, interval: 20 });
      expect(ran.map((run) => run.deliveryId)).toEqual(["1", "1"]);
      // Routes that store no run under the id: their record alone, no add mark.
      expect(await state.seen.checkAndAdd("dd:1")).toBe(false);
      expect(await state.seen.checkAndAdd("grp:1")).toBe(false);
      expect(await raw.exists(keys.seen("dd:1"), keys.seen("grp:1"))).toBe(2);
      expect(await raw.exists(keys.added("dd:1"), keys.added("grp:1"))).toBe(0);
      // A run stored without a record of this instance's (a cron fire, a saved run) clears the way itself.
      await hourOver("pr:1");
      await state.enqueueRun(accepted("1"));
      await vi.waitFor(() => expect(ran).toHaveLength(3), { timeout: 15_000, interval: 20 });
    } finally {
      await state.stop(1000);
      await state.disconnect();
    }
  });
});
