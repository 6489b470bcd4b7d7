import { randomUUID } from "node:crypto";
import { describe, expect, it, vi } from "vitest";
import { redisKeys } from "../../../../src/io/state/redis/keys.js";
import {
  createRedisSubscriptionSource,
  createRedisSubscriptionStore,
} from "../../../../src/io/state/redis/subscriptions.js";
import { captureLogger } from "../../../fakes/logCapture.js";
import { redisPerTest } from "../../../helpers/redisPerTest.js";

/** The gateway's view of the subscriptions in Redis: kept in memory, refreshed in the background. */

const testRedis = redisPerTest();

async function setup(options: { hasGlobalSecret?: () => boolean } = {}) {
  const server = await testRedis.start();
  const keys = redisKeys(`t${randomUUID()}`);
  const writer = await testRedis.connection();
  const reader = await testRedis.connection();
  const log = captureLogger();
  const source = createRedisSubscriptionSource(reader, keys, "test", log.logger, { pollMs: 20, ...options });
  testRedis.closeAfter(() => source.close());
  return { server, keys, store: createRedisSubscriptionStore(writer, keys, "test"), source, log };
}

describe("Redis subscription source", { timeout: 30_000 }, () => {
  it("serves the enabled, valid records; follows adds, disables and removes; invalid ones are logged", async () => {
    const { store, source, log } = await setup();
    await store.update((records) => {
      records.gh = { secret: "s1", events: ["push"], enabled: true, description: "d" };
      records.off = { secret: "s2", enabled: false };
      records.bad = { secret: "s3", evnts: ["push"] };
    });
    await source.open();
    expect(source.names()).toEqual(["gh"]);
    // The route without the record's own fields (description, switch, timestamps).
    expect(source.lookup("gh")).toMatchObject({ secret: "s1", events: ["push"], deliver: "log" });
    expect(source.lookup("gh")).not.toHaveProperty("description");
    expect(log.messages().some((m) => m.includes("bad ignored") && m.includes("evnts"))).toBe(true);

    await store.update((records) => {
      records.off = { secret: "s2", enabled: true };
    });
    await vi.waitFor(() => expect([...source.names()].sort()).toEqual(["gh", "off"]), { timeout: 5000 });
    await store.update((records) => {
      delete records.gh;
    });
    await vi.waitFor(() => expect(source.lookup("gh")).toBeUndefined(), { timeout: 5000 });
  });

  it("a field that is not JSON is logged and skipped; the other records are served", async () => {
    const { keys, store, source, log } = await setup();
    await store.update((records) => {
      records.gh = { secret: "s1" };
    });
    const writer = await testRedis.connection();
    await writer.hset(keys.subscriptions(), "bad", '{"secret": TOPSECRET}');
    await writer.incr(keys.subscriptionsRevision());
    await source.open();
    expect(source.names()).toEqual(["gh"]);
    const ignored = log.messages().filter((m) => m.includes("bad ignored"));
    expect(ignored).toEqual([
      expect.stringContaining("bad: not valid JSON — fix it, or svc webhook remove bad"),
    ]);
    expect(log.messages().join("\n")).not.toContain("TOPSECRET");
  });

  it("a chat id written unquoted with redis-cli keeps its digits (JSON.parse would round it to another channel)", async () => {
    const { keys, source } = await setup();
    const writer = await testRedis.connection();
    await writer.hset(
      keys.subscriptions(),
      "dc",
      '{"secret": "s1", "deliver": "discord", "deliver_extra": {"chat_id": 123456789012345678}}',
    );
    await writer.incr(keys.subscriptionsRevision());
    await source.open();
    expect(source.lookup("dc")?.deliver_extra).toEqual({ chat_id: "123456789012345678" });
  });

  it("a reconnect Redis turns away for want of a password (one set since, the URL gives none) is said so with the start's words and fix, not as a reconnect that comes by itself", async () => {
    const { store, source, log } = await setup();
    await store.update((records) => {
      records.gh = { secret: "s1" };
    });
    await source.open();
    const admin = await testRedis.connection();
    await admin.config("SET", "requirepass", "new-pw");
    // Its connections dropped (as a restart of Redis with its new password drops them): the reconnect is refused.
    await admin.call("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes");
    await vi.waitFor(
      () =>
        expect(log.messages()).toContainEqual(
          expect.stringMatching(
            /^\[webhook\] dynamic subscriptions not refreshed \(Redis at test asks for a password, and state\.redis_url gives none on reconnecting \(NOAUTH [^)]*\) — write it in state\.redis_url \(redis:\/\/:password@host:6379\/0, .*\), then restart the gateway\); serving the last good set of 1 meanwhile$/,
          ),
        ),
      { timeout: 15_000 },
    );
    expect(source.lookup("gh")?.secret).toBe("s1");
  });

  it("a lookup never waits for Redis: with Redis down the last set is served, and the log says so once per outage and when it is over", async () => {
    const { server, store, source, log } = await setup();
    await store.update((records) => {
      records.gh = { secret: "s1" };
    });
    await source.open();
    await server.stop();
    await vi.waitFor(
      () => expect(log.messages().filter((m) => m.includes("not refreshed"))).toHaveLength(1),
      { timeout: 15_000 },
    );
    for (let i = 0; i < 100; i++) expect(source.lookup("gh")?.secret).toBe("s1");
    // Polls go on failing (every 20 ms) while the server starts again, each cause worded its own way.
    await server.start();
    await vi.waitFor(
      () => expect(log.messages().filter((m) => m.includes("refreshed again"))).toHaveLength(1),
      { timeout: 15_000 },
    );
    expect(log.messages().filter((m) => m.includes("not refreshed"))).toHaveLength(1);
  });

  it("after polls that failed, the hash is read again even when the revision reads as before: a store that started over (Redis restarted empty, the subscription made again) is not mistaken for the set last read", async () => {
    const server = await testRedis.start();
    const keys = redisKeys(`t${randomUUID()}`);
    const writer = await testRedis.connection();
    await writer.acl("SETUSER", "gw", "on", ">gw-pass", "~*", "&*", "+@all");
    const reader = await testRedis.connection(server.url.replace("redis://", "redis://gw:gw-pass@"));
    const log = captureLogger();
    const source = createRedisSubscriptionSource(reader, keys, "test", log.logger, { pollMs: 20 });
    testRedis.closeAfter(() => source.close());
    const store = createRedisSubscriptionStore(writer, keys, "test");
    await store.update((records) => {
      records.gh = { secret: "old-secret" };
    });
    await source.open();
    expect(source.lookup("gh")?.secret).toBe("old-secret");
    const revision = await writer.get(keys.subscriptionsRevision());

    // The gateway cannot read (its polls fail) while the store starts over and is written again.
    await writer.acl("SETUSER", "gw", "-get");
    await vi.waitFor(
      () => expect(log.messages().filter((m) => m.includes("not refreshed"))).toHaveLength(1),
      { timeout: 5000 },
    );
    await writer.del(keys.subscriptions(), keys.subscriptionsRevision());
    await store.update((records) => {
      records.gh = { secret: "new-secret" };
    });
    expect(await writer.get(keys.subscriptionsRevision())).toBe(revision);
    await writer.acl("SETUSER", "gw", "+get");
    await vi.waitFor(
      () => expect(log.messages().filter((m) => m.includes("refreshed again"))).toHaveLength(1),
      { timeout: 5000 },
    );
    expect(source.lookup("gh")?.secret).toBe("new-secret");
  });

  it("a reload while Redis is down says the set it judges is the last one read, not one loaded from Redis", async () => {
    const { server, store, source, log, keys } = await setup();
    await store.update((records) => {
      records.gh = { secret: "s1" };
    });
    await source.open();
    await server.stop();
    await vi.waitFor(
      () => expect(log.messages().filter((m) => m.includes("not refreshed"))).toHaveLength(1),
      { timeout: 15_000 },
    );
    source.reloaded();
    expect(log.messages().at(-1)).toBe(
      `[webhook] loaded 1 dynamic subscription(s) from the last set read from ${keys.subscriptions()} in Redis at test (Redis is unreachable; it is read again once it answers)`,
    );
    expect(source.lookup("gh")?.secret).toBe("s1");
  });

  it("a full Redis (OOM) is still read — a gateway started then serves the subscriptions it holds — and a write it refuses is named as such with what to do, not as a bare EXECABORT", async () => {
    const { store, keys, source } = await setup();
    await store.update((records) => {
      records.gh = { secret: "s1", events: ["push"], enabled: true };
    });
    const admin = await testRedis.connection();
    await admin.config("SET", "maxmemory", "1");
    try {
      // A full Redis refuses every command queued in MULTI, reads too: the read is no transaction.
      expect(Object.keys((await store.read()).records)).toEqual(["gh"]);
      await source.open();
      expect(source.names()).toEqual(["gh"]);
      const full = `${keys.subscriptions()} in Redis at test: Redis refused the command (OOM command not allowed when used memory > 'maxmemory'.) — a full Redis: free memory or raise its maxmemory`;
      await expect(
        store.update((records) => {
          records.gx = { secret: "s2", enabled: true };
        }),
      ).rejects.toThrow(full);
    } finally {
      await admin.config("SET", "maxmemory", "0");
    }
  });

  it("reloaded() judges the records again by the reloaded config, without waiting for a change in Redis", async () => {
    let globalSecret = true;
    const { store, source, log } = await setup({ hasGlobalSecret: () => globalSecret });
    await store.update((records) => {
      records.sx = { enabled: true };
    });
    await source.open();
    const unserved = () => log.messages().filter((m) => m.includes("sx is enabled but not served (404)"));
    expect(unserved()).toEqual([]);
    globalSecret = false;
    source.reloaded();
    expect(unserved()).toHaveLength(1);
  });
});
