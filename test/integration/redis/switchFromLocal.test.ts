import { randomUUID } from "node:crypto";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import type { Gateway } from "../../../src/gateway/index.js";
import type { FakeApi } from "../../fakes/httpFake.js";
import { fakeTelegramPerFile } from "../../fakes/telegram.js";
import { startGatewayInHome } from "../../helpers/gateway.js";
import { type TempHome, tempHome, tempPath } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";
import { appendEchoAgent, appendedIds } from "../../helpers/redisCluster.js";
import { redisPerFile } from "../../helpers/redisPerFile.js";

/**
 * Switching a home from `state.backend: local` to `redis`: the delivery ids the local backend would have
 * restored (webhook-seen-ids.json, the journal's live records) are carried into Redis before the listener
 * opens, so a sender's retry of an event accepted (or delivered directly) on local within the hour is
 * still `duplicate`. They used to be forgotten: the run ran again, the message was posted a second time.
 */

const shared = redisPerFile();
const telegram = fakeTelegramPerFile();

const homes: TempHome[] = [];
const gateways: Gateway[] = [];
afterEach(async () => {
  for (const gateway of gateways.splice(0)) await gateway.stop();
  for (const home of homes.splice(0)) home.cleanup();
});

const HOUR_MS = 60 * 60 * 1000;

/** A home's config: `ci` runs an agent that appends each run's delivery id to `ran`, `notify` posts to Telegram. */
function writeConfig(home: TempHome, ran: string, state: Record<string, unknown>): void {
  home.write(
    "config.yaml",
    stringify({
      state,
      agent: appendEchoAgent(ran),
      platforms: {
        telegram: { enabled: true, token: "123:abc", base_url: telegram().url },
        webhook: {
          enabled: true,
          host: "127.0.0.1",
          routes: {
            ci: { secret: "INSECURE_NO_AUTH", prompt: "ci {n}", deliver: "log" },
            notify: {
              secret: "INSECURE_NO_AUTH",
              prompt: "Deploy {n}",
              deliver: "telegram",
              deliver_only: true,
              deliver_extra: { chat_id: "7" },
            },
          },
        },
      },
    }),
    0o600,
  );
}

async function start(home: TempHome, now?: () => number): Promise<Gateway> {
  const gateway = await startGatewayInHome(home, 2000, now);
  gateways.push(gateway);
  return gateway;
}

async function stop(gateway: Gateway): Promise<void> {
  gateways.splice(gateways.indexOf(gateway), 1);
  await gateway.stop();
}

const send = (gateway: Gateway, route: string, id: string) =>
  postJson(`http://127.0.0.1:${gateway.port}/webhooks/${route}`, { n: id }, { "X-Request-ID": id });

/** The INFO lines of the home's log saying how many ids were carried over into Redis. */
const carriedLines = (home: TempHome) =>
  readFileSync(join(home.dir, "logs", "gateway.log"), "utf8")
    .split("\n")
    .filter((line) => line.includes("carried over into Redis"))
    .map((line) => JSON.parse(line) as { msg: string; level: number })
    .map(({ msg, level }) => {
      expect(level).toBe(30);
      return msg;
    });

const posts = (fake: FakeApi, id: string) =>
  fake.requests.filter(
    (r) => r.path.endsWith("/sendMessage") && (r.json as { text: string }).text === `Deploy ${id}`,
  ).length;

/**
 * A home whose local gateway accepted `ci` run `run` (and ran it) and delivered `notify` event `direct`,
 * then stopped gracefully; its config then names the test's Redis under a key prefix of its own.
 */
async function switchedHome(
  run: string,
  direct: string,
): Promise<{ home: TempHome; ran: string; prefix: string }> {
  const home = tempHome();
  homes.push(home);
  const ran = tempPath("switch-ran", ".log");
  writeConfig(home, ran, { backend: "local" });
  const local = await start(home);
  expect((await send(local, "ci", run)).status).toBe(202);
  expect(await send(local, "notify", direct)).toMatchObject({ status: 200, body: { status: "delivered" } });
  await vi.waitFor(() => expect(appendedIds(ran).get(run)).toBe(1), { timeout: 10_000 });
  await stop(local);
  expect(existsSync(join(home.dir, "webhook-seen-ids.json"))).toBe(true);
  const prefix = `sw${randomUUID()}`;
  writeConfig(home, ran, { backend: "redis", redis_url: shared.server.url, redis_key_prefix: prefix });
  return { home, ran, prefix };
}

describe("switching a home from state.backend: local to redis keeps its delivery ids", {
  timeout: 30_000,
}, () => {
  it("after a graceful stop: a retry of a run or a direct delivery accepted on local is a duplicate, and the file stays", async () => {
    const { home, ran } = await switchedHome("SW-1", "L1-d1");
    const redis = await start(home);
    expect(existsSync(join(home.dir, "webhook-seen-ids.json"))).toBe(true);
    expect(await send(redis, "ci", "SW-1")).toMatchObject({ status: 200, body: { status: "duplicate" } });
    expect(await send(redis, "notify", "L1-d1")).toMatchObject({
      status: 200,
      body: { status: "duplicate" },
    });
    expect(posts(telegram(), "L1-d1")).toBe(1);
    expect(appendedIds(ran).get("SW-1")).toBe(1);
    // A new id is processed as usual.
    expect((await send(redis, "notify", "L1-d2")).body).toMatchObject({ status: "delivered" });
    await stop(redis);
    // Still there for a switch back to local; the next start on redis finds the ids in Redis already.
    expect(existsSync(join(home.dir, "webhook-seen-ids.json"))).toBe(true);
    await stop(await start(home));
    expect(carriedLines(home)).toEqual([
      "[state] 2 delivery id(s) of the last hour that state.backend: local remembers in this home carried over into Redis, each for what is left of its hour: a sender's retry of one is a duplicate",
      "[state] 0 delivery id(s) of the last hour that state.backend: local remembers in this home carried over into Redis, each for what is left of its hour: a sender's retry of one is a duplicate (2 more were in Redis already)",
    ]);
  });

  it("from the journal alone (a SIGKILL writes no webhook-seen-ids.json): still duplicates", async () => {
    const { home, ran, prefix } = await switchedHome("SW-2", "L2-d1");
    rmSync(join(home.dir, "webhook-seen-ids.json"));
    const redis = await start(home);
    // As the Redis backend records them: a direct delivery made, and an event no job is stored under.
    expect(await shared.redis.get(`${prefix}:seen:notify:L2-d1`)).toBe("delivered");
    expect(await shared.redis.get(`${prefix}:seen:ci:SW-2`)).toBe("local");
    expect(await send(redis, "ci", "SW-2")).toMatchObject({ status: 200, body: { status: "duplicate" } });
    expect(await send(redis, "notify", "L2-d1")).toMatchObject({
      status: 200,
      body: { status: "duplicate" },
    });
    expect(posts(telegram(), "L2-d1")).toBe(1);
    expect(appendedIds(ran).get("SW-2")).toBe(1);
  });

  it("from webhook-seen-ids.json alone (the journal removed), for what is left of their hour", async () => {
    const { home, prefix } = await switchedHome("SW-3", "L3-d1");
    rmSync(join(home.dir, "state"), { recursive: true, force: true });
    // Half an hour later.
    const redis = await start(home, () => Date.now() + HOUR_MS / 2);
    expect(await send(redis, "ci", "SW-3")).toMatchObject({ status: 200, body: { status: "duplicate" } });
    expect(await send(redis, "notify", "L3-d1")).toMatchObject({
      status: 200,
      body: { status: "duplicate" },
    });
    expect(posts(telegram(), "L3-d1")).toBe(1);
    const left = await shared.redis.pttl(`${prefix}:seen:notify:L3-d1`);
    expect(left).toBeGreaterThan(HOUR_MS / 4);
    expect(left).toBeLessThanOrEqual(HOUR_MS / 2);
  });

  it("an id in the last minute of its hour is a duplicate at once, not taken for a record still pending", async () => {
    const { home, ran } = await switchedHome("SW-4", "L4-d1");
    // 30 s left of their hour: a record pending (its run not stored yet) lives a minute.
    const redis = await start(home, () => Date.now() + HOUR_MS - 30_000);
    expect(await send(redis, "ci", "SW-4")).toMatchObject({ status: 200, body: { status: "duplicate" } });
    expect(await send(redis, "notify", "L4-d1")).toMatchObject({
      status: 200,
      body: { status: "duplicate" },
    });
    expect(appendedIds(ran).get("SW-4")).toBe(1);
  });
});
