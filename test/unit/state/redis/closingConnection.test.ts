import { Redis } from "ioredis";
import { describe, expect, it, vi } from "vitest";
import {
  commandOptions,
  connectRedis,
  createRedisHealth,
} from "../../../../src/io/state/redis/connection.js";
import { captureLogger } from "../../../fakes/logCapture.js";
import { startTestRedis } from "../../../helpers/redis.js";

/** Closes `watched`'s socket from the server's side, as Redis does once it has answered a QUIT. */
async function closedByServer(admin: Redis, watched: Redis): Promise<void> {
  const id = await watched.client("ID");
  await admin.client("KILL", "ID", String(id));
}

describe("a watched connection the stop closes", { timeout: 30_000 }, () => {
  it("its close is no outage once the stop said it closes it, and is one before", async () => {
    const redis = await startTestRedis();
    const admin = new Redis(redis.url);
    const log = captureLogger();
    const health = createRedisHealth("L", log.logger);
    const unreachable = () => log.messages().filter((m) => m.includes("is unreachable"));
    const early = await connectRedis(redis.url, "config.yaml", commandOptions());
    const stopping = await connectRedis(redis.url, "config.yaml", commandOptions());
    try {
      health.watch("early", early);
      health.watch("stopping", stopping);
      health.closing(stopping);
      await closedByServer(admin, stopping);
      await vi.waitFor(() => expect(stopping.status).not.toBe("ready"), { timeout: 5000, interval: 20 });
      expect(unreachable()).toEqual([]);
      expect(health.isDown()).toBe(false);
      // The same close of a connection the stop did not name: an outage, said once.
      await closedByServer(admin, early);
      await vi.waitFor(() => expect(unreachable()).toHaveLength(1), { timeout: 5000, interval: 20 });
      expect(health.isDown()).toBe(true);
    } finally {
      early.disconnect();
      stopping.disconnect();
      admin.disconnect();
      await redis.stop();
    }
  });
});
