import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { silentLogger } from "../../../../src/io/log.js";
import { createSharedCoalescing } from "../../../../src/io/state/redis/coalescing.js";
import {
  commandOptions,
  connectRedis,
  createRedisHealth,
} from "../../../../src/io/state/redis/connection.js";
import { redisKeys } from "../../../../src/io/state/redis/keys.js";
import type { SharedRun } from "../../../../src/io/state/redis/sharedRun.js";
import type { AcceptedEvent } from "../../../../src/streams/context.js";
import { groupedEvent, groupedRoute } from "../../../helpers/groupedEvent.js";
import { startTestRedis, type TestRedis } from "../../../helpers/redis.js";

let server: TestRedis;
let redis: Redis;
beforeAll(async () => {
  server = await startTestRedis();
  redis = await connectRedis(server.url, "config.yaml", commandOptions());
});
afterAll(async () => {
  redis.disconnect();
  await server.cleanup();
});

const ROUTE = groupedRoute(0.05, 60);
const event = (deliveryId: string): AcceptedEvent => groupedEvent(ROUTE, deliveryId);

const shared = (e: AcceptedEvent): SharedRun => ({
  profile: e.profile,
  routeName: e.routeName,
  event: "push",
  deliveryId: e.deliveryId,
  prompt: e.prompt,
  extra: {},
  receivedAt: e.receivedAt,
});

describe("shared coalescing groups (Redis)", () => {
  it("a fire whose run could not be stored (Redis gone between taking the group and enqueueing its run) is tried again, not dropped with its 202'd events", async () => {
    const dispatched: Array<{ id: string; superseded: number }> = [];
    let refuse = 1;
    const coalescing = createSharedCoalescing({
      url: server.url,
      redis,
      keys: redisKeys(`c${randomUUID()}`),
      health: createRedisHealth("test", silentLogger()),
      logger: silentLogger(),
      fireRetry: { attempts: 3, backoffMs: 20 },
      async dispatch(run, superseded) {
        if (refuse > 0) {
          refuse -= 1;
          throw new Error("Redis unreachable: Connection is closed.");
        }
        dispatched.push({ id: run.deliveryId, superseded });
      },
    });
    try {
      for (const id of ["a", "b"])
        expect(await coalescing.offer(event(id), shared(event(id)))).toBe("coalesced");
      coalescing.start();
      await vi.waitFor(() => expect(dispatched).toEqual([{ id: "b", superseded: 1 }]), {
        timeout: 5000,
        interval: 10,
      });
    } finally {
      await coalescing.close(0);
    }
  });
});
