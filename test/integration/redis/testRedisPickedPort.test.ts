import type { Server } from "node:net";
import { Redis } from "ioredis";
import { describe, expect, it, vi } from "vitest";
import { startTestRedis } from "../../helpers/redis.js";
import { portTakers, takenPort, takeReleasedPorts } from "../../helpers/takenPorts.js";

/**
 * The suite's private redis-server listens on a port picked by a bind that is let go first; another socket
 * of the suite can take it before redis-server binds it. The helper then picks another port.
 */
describe("a test's redis-server whose picked port is taken before it binds it", () => {
  const takers = portTakers();

  it("starts on another port, and answers there", async () => {
    takeReleasedPorts(takers, 1);
    const redis = await startTestRedis();
    vi.restoreAllMocks();
    const client = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
    try {
      expect(takers).toHaveLength(1);
      expect(redis.port).not.toBe(takenPort(takers[0] as Server));
      expect(await client.ping()).toBe("PONG");
    } finally {
      client.disconnect();
      await redis.cleanup();
    }
  });

  it("gives up after five ports, saying why", async () => {
    takeReleasedPorts(takers, 5);
    await expect(startTestRedis()).rejects.toThrow(
      /redis-server exited at start: [\s\S]*Address already in use/,
    );
    expect(takers).toHaveLength(5);
  });
});
