import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { ToldMirror } from "../../../../src/io/sessions/mirror.js";
import {
  commandOptions,
  connectRedis,
  createRedisHealth,
} from "../../../../src/io/state/redis/connection.js";
import { redisKeys } from "../../../../src/io/state/redis/keys.js";
import {
  type SharedSessionMirrors,
  sharedSessionMirrors,
} from "../../../../src/io/state/redis/sessionMirrors.js";
import { captureLogger } from "../../../fakes/logCapture.js";
import { fakeClock } from "../../../helpers/gateway.js";
import { startTestRedis, type TestRedis } from "../../../helpers/redis.js";

/**
 * docs/delivery-targets.md (Session mirroring) and docs/durability.md, with state.backend: redis: an instance
 * tells the others its session mirrors on `<prefix>:session-mirrors`, and subscribes to theirs only while told
 * to (a route of its mirrors): until then it opens no connection and asks its ACL user for no channel. A
 * user whose ACL leaves the channel out (Redis 7's `resetchannels`) is warned about, at the subscription and
 * once per run of refused publishes. The real redis-server; the subscribe wait on a fake clock.
 */
let server: TestRedis;
let admin: Redis;
const closers: Array<() => Promise<void> | void> = [];
beforeAll(async () => {
  server = await startTestRedis();
  admin = await connectRedis(server.url, "config.yaml", commandOptions());
});
afterEach(async () => {
  server.thaw();
  for (const close of closers.splice(0).reverse()) await close();
});
afterAll(async () => {
  admin.disconnect();
  await server.cleanup();
});

const mirror = (n: number): ToldMirror => ({
  profile: undefined,
  platform: "telegram",
  chatId: "-1001234",
  route: "tgm",
  text: `event ${n}`,
  at: new Date(0).toISOString(),
});

async function open(url: string, prefix: string, timers = fakeClock()) {
  const redis = await connectRedis(url, "config.yaml", commandOptions());
  redis.on("error", () => {});
  const log = captureLogger();
  const written: ToldMirror[] = [];
  const mirrors = sharedSessionMirrors({
    redis,
    keys: redisKeys(prefix),
    health: createRedisHealth("test", log.logger),
    logger: log.logger,
    write: async (told) => {
      written.push(told);
    },
    timers,
  });
  closers.push(
    () => redis.disconnect(),
    () => mirrors.close(),
  );
  return { mirrors, log, written, timers };
}

const subscribers = async (channel: string) =>
  ((await admin.pubsub("NUMSUB", channel)) as [string, number])[1];

const warnings = (log: ReturnType<typeof captureLogger>) =>
  log.messages().filter((message) => message.includes("session mirrors") || message.includes("not told"));

describe("state.backend: redis — the session mirrors' channel", { timeout: 30_000 }, () => {
  it("is subscribed to only while receiving, on a connection opened then and closed after", async () => {
    const prefix = `m${randomUUID()}`;
    const channel = `${prefix}:session-mirrors`;
    const clientsBefore = Number(/connected_clients:(\d+)/.exec(await admin.info("clients"))?.[1]);
    const { mirrors, written } = await open(server.url, prefix);
    const other = await open(server.url, prefix);
    // Told a mirror meanwhile, it still tells the others (a publish on the commands connection).
    expect(await mirrors.tell(mirror(1))).toBe(true);
    expect(await subscribers(channel)).toBe(0);
    const clients = Number(/connected_clients:(\d+)/.exec(await admin.info("clients"))?.[1]);
    expect(clients - clientsBefore).toBe(2);

    await mirrors.receive(true);
    expect(await subscribers(channel)).toBe(1);
    await other.mirrors.tell(mirror(2));
    await vi.waitFor(() => expect(written.map((m) => m.text)).toEqual(["event 2"]));
    // Asked again: still one subscription.
    await mirrors.receive(true);
    expect(await subscribers(channel)).toBe(1);

    await mirrors.receive(false);
    expect(await subscribers(channel)).toBe(0);
    await vi.waitFor(async () =>
      expect(Number(/connected_clients:(\d+)/.exec(await admin.info("clients"))?.[1]) - clientsBefore).toBe(
        2,
      ),
    );
    await other.mirrors.tell(mirror(3));
    await mirrors.receive(true);
    expect(await subscribers(channel)).toBe(1);
    await mirrors.close();
    expect(await subscribers(channel)).toBe(0);
    expect(written.map((m) => m.text)).toEqual(["event 2"]);
  });

  it("warns when the ACL user has no channel (resetchannels): at the subscription, and once per run of refused publishes", async () => {
    const prefix = `m${randomUUID()}`;
    const channel = `${prefix}:session-mirrors`;
    const user = `u${randomUUID().slice(0, 8)}`;
    await admin.call("ACL", "SETUSER", user, "on", ">pw-3c1d", "resetchannels", `~${prefix}:*`, "+@all");
    closers.push(async () => {
      await admin.call("ACL", "DELUSER", user);
    });
    const { mirrors, log } = await open(server.url.replace("redis://", `redis://${user}:pw-3c1d@`), prefix);
    // Nothing asked of the channel until it receives.
    await mirrors.tell(mirror(0)).then((told) => expect(told).toBe(false));
    const firstPublish = warnings(log);
    expect(firstPublish).toHaveLength(1);
    expect(firstPublish[0]).toMatch(
      new RegExp(
        `^\\[delivery\\] mirror_to_session: not told to the other instances \\(NOPERM .*\\), so only this instance's session of telegram chat -1001234 has it \\(said once until one is told again\\) — let the user of state\\.redis_url use the channel ${channel} \\(ACL SETUSER <user> &${channel}\\)$`,
      ),
    );
    // Said once until one is told again.
    expect(await mirrors.tell(mirror(1))).toBe(false);
    expect(warnings(log)).toHaveLength(1);

    await mirrors.receive(true);
    const subscribing = warnings(log).slice(1);
    expect(subscribing).toEqual([
      expect.stringMatching(
        new RegExp(
          `^\\[state\\] session mirrors of the other instances' deliveries not received: Redis refused the subscription to ${channel} \\(NOPERM .*\\) — let the user of state\\.redis_url use the channel ${channel} \\(ACL SETUSER <user> &${channel}\\)$`,
        ),
      ),
    ]);

    // Granted the channel: told again; refused once more, said once more.
    await admin.call("ACL", "SETUSER", user, `&${channel}`);
    expect(await mirrors.tell(mirror(2))).toBe(true);
    expect(warnings(log)).toHaveLength(2);
    await admin.call("ACL", "SETUSER", user, "resetchannels");
    expect(await mirrors.tell(mirror(3))).toBe(false);
    expect(await mirrors.tell(mirror(4))).toBe(false);
    expect(warnings(log)).toHaveLength(3);
    expect(warnings(log)[2]).toBe(firstPublish[0]);
  });

  it("waits for the subscription 2 s at most: a Redis that does not answer does not hold up the start", async () => {
    const prefix = `m${randomUUID()}`;
    const { mirrors, timers } = await open(server.url, prefix);
    server.freeze();
    let done = false;
    const receiving = mirrors.receive(true).then(() => {
      done = true;
    });
    await vi.waitFor(() => expect(timers.pendingTimers()).toBe(1));
    timers.advance(1999);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(done).toBe(false);
    timers.advance(1);
    await receiving;
    expect(done).toBe(true);
    server.thaw();
    // Subscribed once Redis answers.
    await vi.waitFor(async () => expect(await subscribers(`${prefix}:session-mirrors`)).toBe(1), {
      timeout: 10_000,
    });
  });
});
