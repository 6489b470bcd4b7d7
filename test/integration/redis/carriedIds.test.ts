import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { carryLocalIds } from "../../../src/gateway/carryLocalIds.js";
import { type CarriedId, carryIds } from "../../../src/io/state/redis/carriedIds.js";
import { redisKeys } from "../../../src/io/state/redis/keys.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { redisPerFile } from "../../helpers/redisPerFile.js";

/** The delivery ids a start on Redis carries over from the home's local backend, written to a real redis-server. */

const shared = redisPerFile({ roomAfterEach: true });

const ids = (...keys: string[]): CarriedId[] =>
  keys.map((key) => ({ key, leftMs: 60_000, delivered: key.startsWith("notify:") }));

describe("carrying a local home's delivery ids into Redis", () => {
  it("writes each record SET NX for what is left of its hour, leaving one already there as it is", async () => {
    const keys = redisKeys(`c${randomUUID()}`);
    await shared.redis.set(keys.seen("pr:taken"), "a-request-token", "EX", 3600);
    expect(await carryIds(shared.redis, keys, ids("pr:a", "notify:d1", "pr:taken"))).toEqual({
      written: 2,
      present: 1,
      failed: 0,
    });
    expect(await shared.redis.get(keys.seen("pr:a"))).toBe("local");
    expect(await shared.redis.get(keys.seen("notify:d1"))).toBe("delivered");
    expect(await shared.redis.get(keys.seen("pr:taken"))).toBe("a-request-token");
    const left = await shared.redis.pttl(keys.seen("pr:a"));
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThanOrEqual(60_000);
    // Past one pipeline's batch.
    const many = ids(...Array.from({ length: 2500 }, (_, i) => `pr:m${i}`));
    expect(await carryIds(shared.redis, keys, many)).toEqual({ written: 2500, present: 0, failed: 0 });
  });

  it("says how many it carried over in one INFO line, and at WARN how many a Redis that refuses writes did not take", async () => {
    const keys = redisKeys(`c${randomUUID()}`);
    const redis = { carryOver: (carried: readonly CarriedId[]) => carryIds(shared.redis, keys, carried) };
    const log = captureLogger();
    await carryLocalIds({ redis, ids: ids("pr:a", "pr:b"), logger: log.logger });
    await carryLocalIds({ redis, ids: [], logger: log.logger });
    // Full (noeviction): every write refused.
    await shared.redis.config("SET", "maxmemory", "1");
    await carryLocalIds({ redis, ids: ids("pr:a", "pr:c", "pr:d"), logger: log.logger });
    expect(log.messages()).toEqual([
      "[state] 2 delivery id(s) of the last hour that state.backend: local remembers in this home carried over into Redis, each for what is left of its hour: a sender's retry of one is a duplicate",
      "[state] 3 delivery id(s) of the last hour that state.backend: local remembers in this home could not be carried over into Redis: a sender's retry of one within the hour runs again — the next start on redis tries again (they stay in this home for a start on local)",
    ]);
    const warn = JSON.parse(log.lines()[1] ?? "{}") as { level: number; err: string };
    expect(warn.level).toBe(40);
    expect(warn.err).toMatch(/^OOM /);
  });
});
