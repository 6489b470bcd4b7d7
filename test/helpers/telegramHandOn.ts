import { randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { jobIdOf } from "../../src/io/state/redis/sharedQueue.js";
import { seenKey } from "../../src/streams/stages/idempotency.js";
import type { FakeApi, FakeReply } from "../fakes/httpFake.js";
import { startFakeTelegram } from "../fakes/telegram.js";
import { type TempHome, tempHome } from "./home.js";
import { sample } from "./metrics.js";
import { startTestRedis, type TestRedis } from "./redis.js";
import { appendEchoAgent, type ClusterNode, clusterConfig, withPlatform } from "./redisCluster.js";

/**
 * For the tests of a delivery handed on between instances on one Redis while it waits to retry: the
 * Telegram fake's 429 answer, the instances' config and what the tests read of them.
 */

/** Telegram's answer to a message it refuses for now: 429 with `Retry-After` and `retry_after`. */
export function telegramTooMany(retryAfterS: number): FakeReply {
  return {
    status: 429,
    headers: { "Retry-After": String(retryAfterS) },
    json: {
      ok: false,
      error_code: 429,
      description: `Too Many Requests: retry after ${retryAfterS}`,
      parameters: { retry_after: retryAfterS },
    },
  };
}

/**
 * A config of instances on `redisUrl` under `prefix`: route `route` (no auth) renders `prompt` to the
 * Telegram chat `chat` of the fake at `telegramUrl`; one run at a time, the agent notes each run's delivery
 * id in `agentLog` and answers with the prompt.
 */
export function handOnConfig(options: {
  readonly redisUrl: string;
  readonly prefix: string;
  readonly telegramUrl: string;
  readonly route: string;
  readonly prompt: string;
  readonly chat: string;
  readonly agentLog: string;
}): Record<string, unknown> {
  const base = clusterConfig(
    options.redisUrl,
    options.prefix,
    {
      [options.route]: {
        secret: "INSECURE_NO_AUTH",
        prompt: options.prompt,
        deliver: "telegram",
        deliver_extra: { chat_id: options.chat },
      },
    },
    appendEchoAgent(options.agentLog),
  );
  return withPlatform(base, "telegram", {
    enabled: true,
    token: `1:${options.route}`,
    base_url: options.telegramUrl,
  });
}

/** What the instances of a hand-on test share: the Telegram fake, the real redis-server, a home for files. */
export interface HandOnWorld {
  readonly tg: FakeApi;
  readonly redis: TestRedis;
  readonly home: TempHome;
}

export async function startHandOnWorld(): Promise<HandOnWorld> {
  const [tg, redis] = await Promise.all([startFakeTelegram(), startTestRedis()]);
  return { tg, redis, home: tempHome() };
}

/** Stops the instances `nodes` (emptied) one by one, then the world they ran in. */
export async function stopHandOnWorld(world: HandOnWorld, nodes: ClusterNode[]): Promise<void> {
  for (const node of nodes.splice(0)) await node.stop();
  await Promise.all([world.tg.close(), world.redis.cleanup()]);
  world.home.cleanup();
}

/**
 * Instances' config under a fresh key prefix (route `route` renders `prompt` to the fake's chat `chat`), the
 * agent's log, the job of the run `deliveryId` starts and a queue handle to look at it (closed by the test).
 */
export function handOnRoute(
  world: HandOnWorld,
  options: {
    readonly route: string;
    readonly prompt: string;
    readonly chat: string;
    readonly deliveryId: string;
  },
) {
  const prefix = `${options.route}${randomUUID()}`;
  const log = join(world.home.dir, `${randomUUID()}.log`);
  const cfg = handOnConfig({
    redisUrl: world.redis.url,
    prefix,
    telegramUrl: world.tg.url,
    route: options.route,
    prompt: options.prompt,
    chat: options.chat,
    agentLog: log,
  });
  const connection = new Redis(world.redis.url);
  const queue = new Queue("runs", { connection, prefix: `${prefix}:bull` });
  return { cfg, log, prefix, id: jobIdOf(seenKey(options.route, options.deliveryId)), connection, queue };
}

/** Has the Telegram fake answer `getMe` as a bot and each `sendMessage` as `send` says for its text. */
export function answerSends(tg: FakeApi, send: (text: string) => FakeReply | Promise<FakeReply>): void {
  tg.setHandler((request) => {
    if (!request.path.endsWith("/sendMessage"))
      return { json: { ok: true, result: { id: 42, is_bot: true, username: "svc_test_bot" } } };
    return send(String((request.json as { text?: unknown }).text));
  });
}

/** The instance's `svc_deliveries_retrying` gauge. */
export const deliveriesRetrying = async (node: ClusterNode): Promise<number | undefined> =>
  sample(await (await fetch(node.url("/metrics"))).text(), "svc_deliveries_retrying");

/** The instance's log lines that hold `part`. */
export const linesSaying = (node: ClusterNode, part: string) =>
  node.logs().filter((line) => line.msg.includes(part));

/** The delivery ids the agent noted, one per run. */
export const agentRuns = (file: string): string[] =>
  existsSync(file)
    ? readFileSync(file, "utf8")
        .split("\n")
        .filter((line) => line !== "")
    : [];
