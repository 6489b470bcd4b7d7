import { randomUUID } from "node:crypto";
import { describe, expect, it, vi } from "vitest";
import { redisKeys } from "../../../../src/io/state/redis/keys.js";
import {
  createRedisSubscriptionSource,
  createRedisSubscriptionStore,
  type RedisSubscriptionSource,
} from "../../../../src/io/state/redis/subscriptions.js";
import { captureLogger } from "../../../fakes/logCapture.js";
import { type FakeClock, fakeClock } from "../../../helpers/gateway.js";
import { redisPerTest } from "../../../helpers/redisPerTest.js";

/**
 * Records written into the hash by hand (redis-cli HSET, HDEL), which move no revision counter: every gateway
 * serves them within the bounds docs/durability.md gives — a field added or removed at the next poll (1 s), a
 * record rewritten in place at the next full read (30 s) — the same on an instance started before the edit
 * as on one started after it.
 */

const testRedis = redisPerTest();

/** One instance's view, on its own connection, polling on `clock` at the default rate. */
async function instance(keys: ReturnType<typeof redisKeys>, clock: FakeClock) {
  const log = captureLogger();
  const source = createRedisSubscriptionSource(await testRedis.connection(), keys, "test", log.logger, {
    clock,
  });
  testRedis.closeAfter(() => source.close());
  await source.open();
  return { source, loads: () => log.messages().filter((m) => m.includes("dynamic subscription(s) from")) };
}

/** Moves the clock one poll (1 s) on, and waits until every source's poll is done (its next one scheduled). */
async function nextPoll(clock: FakeClock, sources: number): Promise<void> {
  clock.advance(1000);
  await vi.waitFor(() => expect(clock.pendingTimers()).toBe(sources), { timeout: 5000, interval: 5 });
}

const secretOf = (source: RedisSubscriptionSource, name: string) => source.lookup(name)?.secret;

describe("Redis subscriptions edited by hand", { timeout: 30_000 }, () => {
  it("a field removed or added by hand is served at the next poll, one rewritten in place within 30 s, on an instance started before the edit as on one started after it", async () => {
    await testRedis.start();
    const keys = redisKeys(`t${randomUUID()}`);
    const writer = await testRedis.connection();
    await createRedisSubscriptionStore(writer, keys, "test").update((records) => {
      records.gh = { secret: "gh-secret", events: ["push"] };
      records.gx = { secret: "gx-secret-old", events: ["push"] };
    });
    const clock = fakeClock();
    const before = await instance(keys, clock);
    expect([...before.source.names()].sort()).toEqual(["gh", "gx"]);

    await writer.hdel(keys.subscriptions(), "gh");
    await nextPoll(clock, 1);
    expect(before.source.lookup("gh")).toBeUndefined();
    const after = await instance(keys, clock);
    expect(after.source.lookup("gh")).toBeUndefined();

    await writer.hset(keys.subscriptions(), "hx", JSON.stringify({ secret: "hx-secret", events: ["push"] }));
    await nextPoll(clock, 2);
    for (const { source } of [before, after]) expect(secretOf(source, "hx")).toBe("hx-secret");

    // The field count stays as it was: the periodic full read finds it.
    await writer.hset(
      keys.subscriptions(),
      "gx",
      JSON.stringify({ secret: "gx-secret-new", events: ["push"] }),
    );
    for (let second = 1; second <= 30; second++) {
      await nextPoll(clock, 2);
      if (
        secretOf(before.source, "gx") === "gx-secret-new" &&
        secretOf(after.source, "gx") === "gx-secret-new"
      )
        break;
    }
    for (const { source } of [before, after]) {
      expect(secretOf(source, "gx")).toBe("gx-secret-new");
      expect([...source.names()].sort()).toEqual(["gx", "hx"]);
    }

    // A full read that finds the hash as it was read last loads (and logs) nothing.
    const loadsBefore = before.loads().length;
    const loadsAfter = after.loads().length;
    for (let second = 1; second <= 61; second++) await nextPoll(clock, 2);
    expect(before.loads()).toHaveLength(loadsBefore);
    expect(after.loads()).toHaveLength(loadsAfter);
  });
});
