import { mkdirSync, rmdirSync } from "node:fs";
import { join } from "node:path";
import { Redis } from "ioredis";
import { describe, expect, it, vi } from "vitest";
import {
  commandOptions,
  connectRedis,
  createRedisHealth,
  LIVENESS_PING_MS,
} from "../../../../src/io/state/redis/connection.js";
import { redisKeys } from "../../../../src/io/state/redis/keys.js";
import { captureLogger } from "../../../fakes/logCapture.js";
import { tempHome } from "../../../helpers/home.js";
import { startTestRedis } from "../../../helpers/redis.js";

/**
 * Makes Redis's snapshot fail, so that it refuses writes and PING with MISCONF (`stop-writes-on-bgsave-error
 * yes`, its default): its dir is one removed after Redis moved into it, which no user may write to, root
 * included. `restore` points it at `good` and saves again, which ends the refusal.
 */
async function failSnapshot(admin: Redis, gone: string, good: string) {
  mkdirSync(gone);
  await admin.config("SET", "dir", gone);
  rmdirSync(gone);
  await admin.config("SET", "save", "3600 1");
  await admin.bgsave();
  await vi.waitFor(
    async () => expect(await admin.info("persistence")).toMatch(/rdb_last_bgsave_status:err/),
    {
      timeout: 5000,
      interval: 20,
    },
  );
  return async () => {
    await admin.config("SET", "dir", good);
    await admin.bgsave();
    await vi.waitFor(
      async () => expect(await admin.info("persistence")).toMatch(/rdb_last_bgsave_status:ok/),
      {
        timeout: 5000,
        interval: 20,
      },
    );
  };
}

describe("a liveness PING that Redis refuses", { timeout: 30_000 }, () => {
  it("MISCONF (its snapshot failing: it refuses writes and PING) is logged as a refusal with its fix, not as an outage, and its end once Redis takes writes again", async () => {
    // `dir` is a protected setting in Redis 7: only a server started so lets CONFIG SET change it.
    const own = await startTestRedis({ args: ["--enable-protected-configs", "yes"] });
    const home = tempHome();
    const log = captureLogger();
    const probeKey = redisKeys("misconf").writeProbe("instance-1");
    const health = createRedisHealth("L", log.logger, undefined, undefined, probeKey);
    const watched = await connectRedis(own.url, "config.yaml", commandOptions());
    const admin = new Redis(own.url);
    vi.useFakeTimers({ toFake: ["setInterval"] });
    try {
      const said = (text: string) => log.messages().filter((m) => m.includes(text));
      health.watch("commands", watched);
      await health.keepAlive(async () => undefined);
      const restore = await failSnapshot(admin, join(home.dir, "gone"), home.dir);
      await expect(watched.ping()).rejects.toThrow(/^MISCONF/);
      await vi.advanceTimersByTimeAsync(LIVENESS_PING_MS);
      await vi.waitFor(() => expect(said("refused a command (MISCONF")).toHaveLength(1), {
        timeout: 2000,
        interval: 20,
      });
      expect(said("refused a command (MISCONF")[0]).toContain(
        "requests that need it are answered 503 while it refuses (Redis cannot save its snapshot: check its disk and its log; logged at most once a minute)",
      );
      expect(health.refusing()).toBe(true);
      expect(health.inOutage()).toBe(false);
      // Still refusing at the next round: not logged again within the minute, and still no outage.
      await vi.advanceTimersByTimeAsync(LIVENESS_PING_MS);
      await watched.ping().catch(() => {});
      expect(said("refused a command (MISCONF")).toHaveLength(1);
      await restore();
      await vi.advanceTimersByTimeAsync(LIVENESS_PING_MS);
      await vi.waitFor(() => expect(health.refusing()).toBe(false), { timeout: 2000, interval: 20 });
      expect(said("takes writes again (it refused them: MISCONF")).toHaveLength(1);
      expect(said("is unreachable")).toEqual([]);
    } finally {
      vi.useRealTimers();
      admin.disconnect();
      watched.disconnect();
      await own.cleanup();
      home.cleanup();
    }
  });
});
