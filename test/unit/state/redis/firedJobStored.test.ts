import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { QueuedRun } from "../../../../src/actors/runs.js";
import { silentLogger } from "../../../../src/io/log.js";
import { openRedisState, type RedisState } from "../../../../src/state/redisState.js";
import type { AcceptedEvent, ResolvedRoute } from "../../../../src/streams/context.js";
import { pendingRun } from "../../../helpers/pendingRun.js";
import { startTestRedis, type TestRedis } from "../../../helpers/redis.js";

let server: TestRedis;
beforeAll(async () => {
  server = await startTestRedis();
});
afterAll(async () => {
  await server.cleanup();
});

describe("a cron_job route's fire in the shared queue (state.backend: redis)", () => {
  it("keeps the job it fires: the instance that takes it finds it a fire of that job though the route is agent mode now", async () => {
    const ran: QueuedRun[] = [];
    // The route as the instance taking the run finds it: switched to agent mode since the fire.
    const agentMode = { name: "fire", profile: "default", secret: "s", route: { prompt: "agent run" } };
    const state: RedisState = await openRedisState({
      settings: { backend: "redis", redis_url: server.url, redis_key_prefix: `fj${Date.now()}` } as never,
      configFile: "config.yaml",
      logger: silentLogger(),
      maxConcurrentRuns: 1,
      rateLimit: 1000,
      elapsed: () => 0,
      lookup: () => agentMode as unknown as ResolvedRoute,
      async execute(run) {
        ran.push(run);
      },
    });
    try {
      const fired = {
        ...pendingRun("d1", { routeName: "fire" }),
        route: { cron_job: "triage" },
        payload: {},
        headers: {},
        cronJob: "triage",
      } as unknown as AcceptedEvent;
      const agent = {
        ...pendingRun("d2", { routeName: "fire" }),
        route: { prompt: "agent run" },
        payload: {},
        headers: {},
      } as unknown as AcceptedEvent;
      await state.enqueueRun(fired);
      await state.enqueueRun(agent);
      state.start();
      await vi.waitFor(() => expect(ran).toHaveLength(2), { timeout: 15_000, interval: 20 });
      const byId = Object.fromEntries(ran.map((run) => [run.deliveryId, run.cronJob]));
      expect(byId).toEqual({ d1: "triage", d2: undefined });
      expect(ran.find((run) => run.deliveryId === "d2")).not.toHaveProperty("cronJob");
    } finally {
      await state.stop(1000);
      await state.disconnect();
    }
  });
});
