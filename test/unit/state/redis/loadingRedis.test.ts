import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { StoppedWhileWaiting } from "../../../../src/errors.js";
import { commandOptions, connectRedis } from "../../../../src/io/state/redis/connection.js";
import { redisKeys } from "../../../../src/io/state/redis/keys.js";
import { sayWhileLoading } from "../../../../src/io/state/redis/loadingWait.js";
import { jobIdOf } from "../../../../src/io/state/redis/sharedQueue.js";
import { type LoadingRedis, startLoadingRedis } from "../../../helpers/loadingRedis.js";
import { startTestRedis, type TestRedis } from "../../../helpers/redis.js";
import { startReplyHoldingProxy } from "../../../helpers/replyHoldingProxy.js";
import { runsQueue } from "../../../helpers/runsQueue.js";

let server: TestRedis;
let proxy: LoadingRedis | undefined;
beforeAll(async () => {
  server = await startTestRedis();
});
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});
afterAll(async () => {
  await server.cleanup();
});

/** Lines said, and a promise of the `count`th. */
function saidLines(): { lines: string[]; say(line: string): void; nth(count: number): Promise<void> } {
  const lines: string[] = [];
  const waiting: Array<{ count: number; resolve: () => void }> = [];
  return {
    lines,
    say(line) {
      lines.push(line);
      for (const wait of waiting.filter((w) => lines.length >= w.count)) wait.resolve();
    },
    nth: (count) =>
      lines.length >= count ? Promise.resolve() : new Promise((resolve) => waiting.push({ count, resolve })),
  };
}

describe("a Redis still loading its data at the start (LOADING)", { timeout: 20_000 }, () => {
  it("is said to be waited for, with how far its load is, and the connection is made once it is loaded", async () => {
    proxy = await startLoadingRedis(server.port);
    const said = saidLines();
    let connected = false;
    const connecting = connectRedis(proxy.url, "config.yaml", commandOptions(), `p${randomUUID()}`, {
      say: said.say,
    }).then((redis) => {
      connected = true;
      return redis;
    });
    await said.nth(1);
    expect(said.lines[0]).toContain("Redis is loading its data after a restart: it answers once loaded");
    expect(said.lines[0]).toContain(`(redis://127.0.0.1:${new URL(proxy.url).port}/0)`);
    expect(said.lines[0]).toContain("svc waits for it — 42% loaded, about 1 s left");
    expect(connected).toBe(false);
    proxy.loaded();
    const redis = await connecting;
    try {
      expect(await redis.ping()).toBe("PONG");
      // The wait said is said to be over (a start that times out later is not blamed on the load).
      expect(said.lines.at(-1)).toBe(
        `Redis has loaded its data (redis://127.0.0.1:${new URL(proxy.url).port}/0); svc goes on`,
      );
    } finally {
      redis.disconnect();
    }
  });

  it("is said to be waited for when it asks for a password too (INFO asked once the connection has authenticated)", async () => {
    const guarded = await startTestRedis();
    const admin = new Redis(guarded.url);
    await admin.config("SET", "requirepass", "loading-pw");
    admin.disconnect();
    const guardedProxy = await startLoadingRedis(guarded.port, { password: true });
    try {
      const said = saidLines();
      const url = guardedProxy.url.replace("redis://", "redis://:loading-pw@");
      const connecting = connectRedis(url, "config.yaml", commandOptions(), `p${randomUUID()}`, {
        say: said.say,
      });
      await said.nth(1);
      expect(said.lines[0]).toContain("svc waits for it — 42% loaded");
      guardedProxy.loaded();
      (await connecting).disconnect();
    } finally {
      await guardedProxy.close();
      await guarded.cleanup();
    }
  });

  it("is said again while the load goes on", async () => {
    proxy = await startLoadingRedis(server.port);
    const redis = new Redis(proxy.url, { lazyConnect: true });
    const said = saidLines();
    const stop = sayWhileLoading(redis, "test", said.say, 20);
    const connecting = redis.connect().catch(() => {});
    try {
      await said.nth(3);
      expect(new Set(said.lines).size).toBe(1);
    } finally {
      stop();
      redis.disconnect();
      await connecting;
    }
  });

  it("is waited for no longer once the gateway's stop signal came: the connect rejects with StoppedWhileWaiting", async () => {
    proxy = await startLoadingRedis(server.port);
    const said = saidLines();
    const stopping = new AbortController();
    const connecting = connectRedis(proxy.url, "config.yaml", commandOptions(), `p${randomUUID()}`, {
      say: said.say,
      signal: stopping.signal,
    });
    await said.nth(1);
    stopping.abort();
    await expect(connecting).rejects.toBeInstanceOf(StoppedWhileWaiting);
  });

  it("a Redis that answers the connection's INFO with LOADING too is refused with that reason, not taken for another problem", async () => {
    proxy = await startLoadingRedis(server.port, { infoRefused: true });
    await expect(
      connectRedis(proxy.url, "config.yaml", { ...commandOptions(), retryStrategy: () => null }),
    ).rejects.toThrow(
      /LOADING Redis is loading the dataset in memory.*Redis is loading its data after a restart/,
    );
  });
});

describe("a shared queue closed while its worker fetches a job (a stop signal right after the start)", {
  timeout: 20_000,
}, () => {
  it("gives back the job that fetch takes, unrun and not counted as lost: another instance runs it", async () => {
    const prefix = `q${randomUUID()}`;
    const keys = redisKeys(prefix);
    const ran: Array<{ by: string; n: number }> = [];
    const queue = (by: string, url: string) => runsQueue(url, keys, (n) => ran.push({ by, n }));
    const other = queue("other", server.url);
    await other.enqueue("hook:1", { n: 1 });
    // The worker's fetch (BullMQ's moveToActive script, whose first key is the queue's wait list) is answered
    // only once the close has begun.
    const holding = await startReplyHoldingProxy(
      server.port,
      (args) => /^eval(sha)?$/i.test(args[0] ?? "") && (args[3] ?? "").endsWith(`${prefix}:bull:runs:wait`),
    );
    const stopping = queue("stopping", holding.url);
    const redis = new Redis(server.url);
    try {
      stopping.start();
      await holding.holding;
      const closed = stopping.close(2000);
      holding.release();
      await closed;
      expect(ran).toEqual([]);
      expect(await redis.llen(`${prefix}:bull:runs:active`)).toBe(0);
      other.start();
      await expect.poll(() => ran, { timeout: 10_000 }).toEqual([{ by: "other", n: 1 }]);
      const job = await other.queue.getJob(jobIdOf("hook:1"));
      expect(job?.stalledCounter ?? 0).toBe(0);
    } finally {
      redis.disconnect();
      await other.close(0);
      await holding.close();
    }
  });
});
