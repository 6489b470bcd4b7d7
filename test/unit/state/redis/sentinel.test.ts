import { describe, expect, it } from "vitest";
import { commandOptions, connectRedis } from "../../../../src/io/state/redis/connection.js";
import { startTestRedis } from "../../../helpers/redis.js";

/**
 * `state.redis_url` naming a Redis Sentinel (port 26379, where an application set up for Sentinel points):
 * it answers PING and INFO but keeps no data, so its refusal of SELECT read as a database it does not have.
 */
describe("a state.redis_url that names a Redis Sentinel", { timeout: 30_000 }, () => {
  it("is named as a Sentinel, with the primary it watches to point at, not as a missing database", async () => {
    const primary = await startTestRedis();
    const sentinel = await startTestRedis({ sentinelOf: primary.port });
    try {
      const refused = connectRedis(sentinel.url, "/home/x/config.yaml", commandOptions(), "svc");
      await expect(refused).rejects.toThrow(
        `/home/x/config.yaml: state.redis_url: ${sentinel.url} is a Redis Sentinel (redis_mode:sentinel), which watches Redis servers and keeps no data — point state.redis_url at the primary it watches (127.0.0.1:${primary.port}, as primary): svc connects to one Redis server, not through Sentinel`,
      );
      await expect(refused).rejects.not.toThrow(/database/);
    } finally {
      await sentinel.cleanup();
      await primary.cleanup();
    }
  });
});
