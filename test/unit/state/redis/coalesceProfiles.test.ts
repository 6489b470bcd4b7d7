import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { QueuedRun } from "../../../../src/actors/runs.js";
import { silentLogger } from "../../../../src/io/log.js";
import { createSharedCoalescing } from "../../../../src/io/state/redis/coalescing.js";
import { createRedisHealth } from "../../../../src/io/state/redis/connection.js";
import { redisKeys } from "../../../../src/io/state/redis/keys.js";
import type { RedisState } from "../../../../src/state/redisState.js";
import type { AcceptedEvent, ResolvedRoute } from "../../../../src/streams/context.js";
import { groupedEvent, groupedRoute, sharedRunOf as shared } from "../../../helpers/groupedEvent.js";
import { redisPerFile } from "../../../helpers/redisPerFile.js";
import { openTestRedisState } from "../../../helpers/testRedisState.js";

const own = redisPerFile();

// A quiet window both offers of a test reach in time on a loaded machine.
const GROUPED = groupedRoute(0.5, 60);

/** An event of route `grp` (coalescing on `n`, group `n: 1`) accepted under `profile`. */
const under = (profile: string, deliveryId: string): AcceptedEvent => ({
  ...groupedEvent(GROUPED, deliveryId),
  profile,
  prompt: `grp ${profile} ${deliveryId}`,
});

const opened: RedisState[] = [];
afterEach(async () => {
  for (const state of opened.splice(0)) {
    await state.stop(1000);
    await state.disconnect();
  }
});

/** An instance on `prefix` whose config binds route `grp` to `profile`; its runs are pushed to `ran`. */
async function instance(prefix: string, profile: string, ran: QueuedRun[]): Promise<RedisState> {
  const route = { name: "grp", profile, secret: "s", route: GROUPED } as ResolvedRoute;
  const state = await openTestRedisState(own.server.url, prefix, {
    logger: silentLogger(),
    stall: { lockDurationMs: 30_000, stalledIntervalMs: 30_000 },
    lookup: (name) => (name === "grp" ? route : undefined),
    async execute(run) {
      ran.push(run);
    },
  });
  opened.push(state);
  return state;
}

const byId = (runs: readonly QueuedRun[]) =>
  runs
    .map((r) => ({ id: r.deliveryId, profile: r.profile, prompt: r.prompt }))
    .sort((a, b) => a.id.localeCompare(b.id));

describe("shared coalescing groups (Redis) of a route bound to a named profile", { timeout: 30_000 }, () => {
  it("events of one route and key accepted under two profiles (the route rebound on one instance) are two groups, each run as its own profile", async () => {
    const prefix = `cp${randomUUID()}`;
    const ran: QueuedRun[] = [];
    const beta = await instance(prefix, "beta", ran);
    const alpha = await instance(prefix, "alpha", ran);
    expect(await beta.coalesce(under("beta", "b-1"))).toBe("coalesced");
    expect(await alpha.coalesce(under("alpha", "a-2"))).toBe("coalesced");
    const keys = redisKeys(prefix);
    expect(await own.redis.exists(keys.coalesceGroup("grp@beta:1"))).toBe(1);
    expect(await own.redis.exists(keys.coalesceGroup("grp@alpha:1"))).toBe(1);
    expect(await own.redis.exists(keys.coalesceGroup("grp:1"))).toBe(0);
    beta.start();
    alpha.start();
    await vi.waitFor(() => expect(ran).toHaveLength(2), { timeout: 10_000, interval: 20 });
    // Neither run covers the other's event: no "earlier event … was superseded" note.
    expect(byId(ran)).toEqual([
      { id: "a-2", profile: "alpha", prompt: "grp alpha a-2" },
      { id: "b-1", profile: "beta", prompt: "grp beta b-1" },
    ]);
  });

  it("events of one profile still make one group, and a default-profile group keeps its id <route>:<key>", async () => {
    const prefix = `cp${randomUUID()}`;
    const ran: QueuedRun[] = [];
    const a = await instance(prefix, "default", ran);
    const b = await instance(prefix, "default", ran);
    expect(await a.coalesce(under("default", "d-1"))).toBe("coalesced");
    expect(await b.coalesce(under("default", "d-2"))).toBe("coalesced");
    expect(await own.redis.exists(redisKeys(prefix).coalesceGroup("grp:1"))).toBe(1);
    a.start();
    b.start();
    await vi.waitFor(() => expect(ran).toHaveLength(1), { timeout: 10_000, interval: 20 });
    expect(ran[0]?.deliveryId).toBe("d-2");
    expect(ran[0]?.profile).toBe("default");
    expect(ran[0]?.prompt).toMatch(/^\[Coalesced: this run covers 2 events;/);
  });

  it("a named profile's group stored before the upgrade under <route>:<key> fires on its stored timer as that profile, beside the group a later event opens", async () => {
    const keys = redisKeys(`cp${randomUUID()}`);
    const dispatched: Array<{ id: string; profile: string; superseded: number }> = [];
    const coalescing = createSharedCoalescing({
      url: own.server.url,
      redis: own.redis,
      keys,
      health: createRedisHealth("test", silentLogger()),
      logger: silentLogger(),
      async dispatch(run, superseded) {
        dispatched.push({ id: run.deliveryId, profile: run.profile, superseded });
      },
    });
    try {
      // What a version before the profile was in the id left: alpha's run in the group `grp:1`, with its timer job.
      const old = under("alpha", "old-1");
      expect(await coalescing.offer({ ...old, profile: "default" }, shared(old))).toBe("coalesced");
      expect(await own.redis.exists(keys.coalesceGroup("grp:1"))).toBe(1);
      const later = under("alpha", "new-2");
      expect(await coalescing.offer(later, shared(later))).toBe("coalesced");
      expect(await own.redis.exists(keys.coalesceGroup("grp@alpha:1"))).toBe(1);
      // The sweep (every 30 s) is not what fires them: their timer jobs are.
      coalescing.start();
      await vi.waitFor(() => expect(dispatched).toHaveLength(2), { timeout: 10_000, interval: 20 });
      expect([...dispatched].sort((x, y) => x.id.localeCompare(y.id))).toEqual([
        { id: "new-2", profile: "alpha", superseded: 0 },
        { id: "old-1", profile: "alpha", superseded: 0 },
      ]);
    } finally {
      await coalescing.close(0);
    }
  });
});
