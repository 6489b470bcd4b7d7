import { randomUUID } from "node:crypto";
import { describe, expect, it, vi } from "vitest";
import { silentLogger } from "../../../../src/io/log.js";
import { createSharedCoalescing } from "../../../../src/io/state/redis/coalescing.js";
import { createRedisHealth } from "../../../../src/io/state/redis/connection.js";
import { type RedisKeys, redisKeys } from "../../../../src/io/state/redis/keys.js";
import type { AcceptedEvent } from "../../../../src/streams/context.js";
import { groupedEvent, groupedRoute, sharedRunOf as shared } from "../../../helpers/groupedEvent.js";
import { startTestRedis } from "../../../helpers/redis.js";
import { redisPerFile } from "../../../helpers/redisPerFile.js";

const own = redisPerFile();

// A quiet window the second of two back-to-back offers reaches in time on a loaded machine: an event after
// the group fell due opens a new group.
const ROUTE = groupedRoute(0.3, 60);

/** An event of route `grp` (coalescing on `n`) whose `n` is `key`. */
const keyed = (deliveryId: string, key: string): AcceptedEvent => ({
  ...groupedEvent(ROUTE, deliveryId),
  payload: { n: key },
});

/** A shared coalescing on `keys` recording what fired; `url` is its timer queue's Redis. */
function recording(
  keys: RedisKeys,
  options: { url?: string; sweep?: { everyMs: number; graceMs: number } } = {},
) {
  const dispatched: Array<{ id: string; superseded: number }> = [];
  const coalescing = createSharedCoalescing({
    url: options.url ?? own.server.url,
    redis: own.redis,
    keys,
    health: createRedisHealth("test", silentLogger()),
    logger: silentLogger(),
    ...(options.sweep === undefined ? {} : { sweep: options.sweep }),
    async dispatch(run, superseded) {
      dispatched.push({ id: run.deliveryId, superseded });
    },
  });
  return { coalescing, dispatched };
}

/**
 * Keys that Redis's UTF-8 would make one (each lone surrogate becomes U+FFFD), and keys that look like
 * the spelling of one: each is a group of its own, as with the local backend.
 */
const KEYS = {
  "lone-d83d": "\ud83d",
  "lone-d83e": "\ud83e",
  "lone-in-text": "pr \udc00 7",
  replacement: "\ufffd",
  "escaped-text": '"\\ud83d"',
};

const sorted = (list: Array<{ id: string; superseded: number }>) =>
  [...list].sort((a, b) => a.id.localeCompare(b.id));

const eachAlone = Object.keys(KEYS)
  .map((id) => ({ id, superseded: 0 }))
  .sort((a, b) => a.id.localeCompare(b.id));

describe("shared coalescing groups (Redis): a key with a lone UTF-16 surrogate", () => {
  it("keys that differ only in a lone surrogate are groups of their own, each firing its one event", async () => {
    const { coalescing, dispatched } = recording(redisKeys(`c${randomUUID()}`));
    try {
      for (const [id, key] of Object.entries(KEYS))
        expect(await coalescing.offer(keyed(id, key), shared(keyed(id, key)))).toBe("coalesced");
      coalescing.start();
      await vi.waitFor(() => expect(sorted(dispatched)).toEqual(eachAlone), { timeout: 5000, interval: 10 });
    } finally {
      await coalescing.close(0);
    }
  });

  it("a group whose timer was never stored is found by another instance's sweep under its key, as any group", async () => {
    const keys = redisKeys(`c${randomUUID()}`);
    // The joins reach Redis; the timer queue's Redis refuses its scripts: the state a kill right after a join leaves.
    const refusing = await startTestRedis({
      args: ["--rename-command", "EVALSHA", "", "--rename-command", "EVAL", ""],
    });
    const cut = recording(keys, { url: refusing.url });
    try {
      for (const [id, key] of Object.entries(KEYS))
        expect(await cut.coalescing.offer(keyed(id, key), shared(keyed(id, key)))).toBe("coalesced");
    } finally {
      await cut.coalescing.close(0);
      await refusing.cleanup();
    }
    const { coalescing: other, dispatched } = recording(keys, { sweep: { everyMs: 20, graceMs: 0 } });
    try {
      other.start();
      await vi.waitFor(() => expect(sorted(dispatched)).toEqual(eachAlone), { timeout: 5000, interval: 10 });
      await vi.waitFor(async () => expect(await own.redis.zcard(keys.coalesceDue())).toBe(0), {
        timeout: 5000,
        interval: 10,
      });
      expect(dispatched).toHaveLength(eachAlone.length);
    } finally {
      await other.close(0);
    }
  });

  it("a well-formed key (a surrogate pair among them) keeps the Redis key it had, so a group waiting across an upgrade is joined", async () => {
    const keys = redisKeys(`c${randomUUID()}`);
    const { coalescing, dispatched } = recording(keys);
    try {
      const first = keyed("pair-a", "\ud83d\ude00");
      expect(await coalescing.offer(first, shared(first))).toBe("coalesced");
      expect(await own.redis.exists(keys.coalesceGroup("grp:\ud83d\ude00"))).toBe(1);
      const second = keyed("pair-b", "😀");
      expect(await coalescing.offer(second, shared(second))).toBe("coalesced");
      coalescing.start();
      await vi.waitFor(() => expect(dispatched).toEqual([{ id: "pair-b", superseded: 1 }]), {
        timeout: 5000,
        interval: 10,
      });
    } finally {
      await coalescing.close(0);
    }
  });
});
