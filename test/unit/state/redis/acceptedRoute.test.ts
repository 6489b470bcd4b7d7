import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { QueuedRun } from "../../../../src/actors/runs.js";
import { openRedisState, type RedisState } from "../../../../src/state/redisState.js";
import type { AcceptedEvent, ResolvedRoute } from "../../../../src/streams/context.js";
import { captureLogger } from "../../../fakes/logCapture.js";
import { pendingRun } from "../../../helpers/pendingRun.js";
import { startTestRedis, type TestRedis } from "../../../helpers/redis.js";

let server: TestRedis;
beforeAll(async () => {
  server = await startTestRedis();
});
afterAll(async () => {
  await server.cleanup();
});

describe("a shared run whose route this instance's config does not serve (state.backend: redis)", () => {
  it("runs with the route it was accepted under, and the log says this gateway's config serves no such route (it may be only in the accepting instance's), not that the route is no longer served", async () => {
    const ran: QueuedRun[] = [];
    const log = captureLogger();
    // This instance's config: no route onlyA; a route work, bound to the default profile.
    const routes: Record<string, unknown> = {
      work: { name: "work", profile: "default", secret: "s", route: { prompt: "here", deliver: "log" } },
    };
    const state: RedisState = await openRedisState({
      settings: { backend: "redis", redis_url: server.url, redis_key_prefix: `ar${Date.now()}` } as never,
      configFile: "config.yaml",
      logger: log.logger,
      maxConcurrentRuns: 1,
      rateLimit: 1000,
      elapsed: () => 0,
      lookup: (name) => routes[name] as ResolvedRoute | undefined,
      disabled: (name) => name === "paused",
      async execute(run) {
        ran.push(run);
      },
    });
    try {
      const accepted = (deliveryId: string, routeName: string, profile: string) =>
        ({
          ...pendingRun(deliveryId, { routeName, profile }),
          route: { prompt: "there", deliver: "telegram" },
          payload: {},
          headers: {},
        }) as unknown as AcceptedEvent;
      await state.enqueueRun(accepted("d1", "onlyA", "default"));
      await state.enqueueRun(accepted("d2", "work", "work"));
      await state.enqueueRun(accepted("d3", "paused", "default"));
      state.start();
      await vi.waitFor(() => expect(ran).toHaveLength(3), { timeout: 15_000, interval: 20 });
      expect(ran.map((run) => run.route.deliver)).toEqual(["telegram", "telegram", "telegram"]);
      // Only the route no config here serves reads its toolsets against the accepting instance's servers.
      expect(ran.map((run) => [run.routeName, run.routeAsAccepted])).toEqual([
        ["onlyA", true],
        ["work", undefined],
        ["paused", undefined],
      ]);
      const notes = log.messages().filter((msg) => msg.includes("the route it was accepted under"));
      expect(notes).toEqual([
        "[webhook] onlyA: this gateway's config serves no route onlyA (removed since the event was accepted, or only in the config of the instance that accepted it); the run goes on with the route it was accepted under",
        "[webhook] work: this gateway's config serves route work for profile default, not for work, the profile it was accepted for; the run goes on with the route it was accepted under",
        "[webhook] paused: paused is a disabled subscription now (svc webhook enable paused serves it again); the run goes on with the route it was accepted under",
      ]);
    } finally {
      await state.stop(1000);
      await state.disconnect();
    }
  });
});
