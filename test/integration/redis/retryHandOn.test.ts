import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { sentContents, startFakeDiscord } from "../../fakes/discord.js";
import type { FakeApi, RecordedRequest } from "../../fakes/httpFake.js";
import { fakeClock } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { type ClusterNode, startNode } from "../../helpers/redisCluster.js";
import {
  agentRuns,
  answerSends,
  deliveriesRetrying,
  type HandOnWorld,
  handOnRoute,
  linesSaying,
  startHandOnWorld,
  stopHandOnWorld,
  telegramTooMany,
} from "../../helpers/telegramHandOn.js";

/**
 * docs/durability.md and docs/delivery-targets.md, "Retries", with state.backend: redis: a delivery whose
 * instance stops (past its drain) while it waits out the platform's Retry-After is handed on at once, told
 * when that retry is due on Redis's clock; the instance that takes it waits out the rest and counts its
 * attempts on: 1 attempt and 3 retries in all, across the two instances. The platform is a Telegram fake on loopback that answers every message 429
 * with `Retry-After: 120`; the instances' retries wait on the test's clocks.
 */
const CHAT = "-300";
const RETRY_AFTER_S = 120;
let world: HandOnWorld;
let discord: FakeApi;
const nodes: ClusterNode[] = [];

const sends = () =>
  world.tg.requests.filter(
    (r: RecordedRequest) =>
      r.path.endsWith("/sendMessage") && String((r.json as { chat_id?: unknown }).chat_id) === CHAT,
  );

beforeAll(async () => {
  [world, discord] = await Promise.all([startHandOnWorld(), startFakeDiscord("D")]);
  answerSends(world.tg, () => telegramTooMany(RETRY_AFTER_S));
});
afterAll(async () => {
  await stopHandOnWorld(world, nodes);
  await discord.close();
});

/** Redis's clock, in ms. */
async function redisNow(connection: Redis): Promise<number> {
  const [seconds, micros] = await connection.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/** Route `slow` to the Telegram fake, under a fresh key prefix (see `handOnRoute`). */
const slowRoute = (deliveryId: string) =>
  handOnRoute(world, { route: "slow", prompt: "event {n}", chat: CHAT, deliveryId });

describe("state.backend: redis — a delivery handed on while it waits to retry", { timeout: 30_000 }, () => {
  it("waits out what is left of the platform's Retry-After on the next instance, and its attempts count on", async () => {
    const { cfg, log, id, connection, queue } = slowRoute("h-1");
    try {
      // Its retry waits on a clock that never moves: the stop's drain (0.2 s) ends with the delivery waiting.
      const a = await startNode(cfg, { sleeps: fakeClock(Date.now()), drainTimeoutMs: 200 });
      nodes.push(a);
      const before = Date.now();
      const answer = await postJson(a.url("/webhooks/slow"), JSON.stringify({ n: "h-1" }), {
        "X-Request-Id": "h-1",
      });
      expect(answer.status).toBe(202);
      await vi.waitFor(async () => expect(await deliveriesRetrying(a)).toBe(1), {
        timeout: 10_000,
        interval: 20,
      });
      const after = Date.now();
      expect(linesSaying(a, `retry 1/3 in ${RETRY_AFTER_S * 1000} ms`)).toHaveLength(1);
      await a.stop();
      expect(sends()).toHaveLength(1);

      // Kept with the reply: when the retry is due and the attempt made; the job waits for the next instance
      // at once, told when that retry is due on Redis's clock (what is left of it: under the 120 s).
      const job = await queue.getJob(id);
      if (job === undefined) throw new Error(`no job ${id} in Redis`);
      expect(await job.getState()).toBe("waiting");
      const { retry, handedOnDue } = job.data as {
        retry?: { dueAt: number; attempts: number };
        handedOnDue?: { retryDueAt: number; onRedis: number };
      };
      expect(retry?.attempts).toBe(1);
      const dueAt = retry?.dueAt ?? 0;
      expect(dueAt).toBeGreaterThanOrEqual(before + RETRY_AFTER_S * 1000);
      expect(dueAt).toBeLessThanOrEqual(after + RETRY_AFTER_S * 1000);
      expect(handedOnDue?.retryDueAt).toBe(dueAt);
      const leftOnRedis = (handedOnDue?.onRedis ?? 0) - (await redisNow(connection));
      expect(leftOnRedis).toBeGreaterThan(0);
      expect(leftOnRedis).toBeLessThanOrEqual(RETRY_AFTER_S * 1000);

      // As stored by an instance whose clock ran ten minutes behind the next one's: its due time on that
      // clock long past here. The instance that takes it still waits out the rest (on Redis's clock), out of
      // its slot, rather than sending at once.
      const behind = dueAt - 600_000;
      await job.updateData({
        ...job.data,
        retry: { ...retry, dueAt: behind },
        handedOnDue: { ...handedOnDue, retryDueAt: behind },
      });
      const clock = fakeClock(Date.now());
      const b = await startNode(cfg, { sleeps: clock });
      nodes.push(b);
      await vi.waitFor(
        () => expect(linesSaying(b, "handed on waiting to retry — retry 1/3 in ")).toHaveLength(1),
        {
          timeout: 10_000,
          interval: 20,
        },
      );
      const left = Number(
        / in (\d+) ms$/.exec(linesSaying(b, "handed on waiting to retry")[0]?.msg ?? "")?.[1],
      );
      expect(left).toBeGreaterThan(0);
      expect(left).toBeLessThanOrEqual(leftOnRedis);
      await vi.waitFor(async () => expect(await deliveriesRetrying(b)).toBe(1), {
        timeout: 10_000,
        interval: 20,
      });
      await vi.waitFor(() => expect(clock.pendingTimers()).toBe(1), { timeout: 10_000, interval: 20 });
      expect(sends()).toHaveLength(1);

      // Each retry answered 429 again: the 2nd and the 3rd, then given up — 4 attempts in all.
      for (const [n, next] of [
        [2, "retry 2/3 in 120000 ms"],
        [3, "retry 3/3 in 120000 ms"],
      ] as const) {
        clock.advance(RETRY_AFTER_S * 1000);
        await vi.waitFor(() => expect(sends()).toHaveLength(n), { timeout: 10_000, interval: 20 });
        await vi.waitFor(() => expect(linesSaying(b, next)).toHaveLength(1), {
          timeout: 10_000,
          interval: 20,
        });
        await vi.waitFor(() => expect(clock.pendingTimers()).toBe(1), { timeout: 10_000, interval: 20 });
      }
      clock.advance(RETRY_AFTER_S * 1000);
      await vi.waitFor(() => expect(linesSaying(b, "gave up after 3 retries")).toHaveLength(1), {
        timeout: 10_000,
        interval: 20,
      });
      await vi.waitFor(async () => expect(await queue.getJobState(id)).toBe("completed"), {
        timeout: 10_000,
        interval: 20,
      });
      expect(sends()).toHaveLength(4);
      expect(agentRuns(log)).toEqual(["h-1"]);
    } finally {
      await queue.close();
      connection.disconnect();
    }
  });

  it("is not timed by a due time on Redis's clock stored beside another retry than its own (by a version that kept it): it waits for its own", async () => {
    const { cfg, id, connection, queue } = slowRoute("s-1");
    try {
      const a = await startNode(cfg, { sleeps: fakeClock(Date.now()), drainTimeoutMs: 200 });
      nodes.push(a);
      const answer = await postJson(a.url("/webhooks/slow"), JSON.stringify({ n: "s-1" }), {
        "X-Request-Id": "s-1",
      });
      expect(answer.status).toBe(202);
      await vi.waitFor(async () => expect(await deliveriesRetrying(a)).toBe(1), {
        timeout: 10_000,
        interval: 20,
      });
      await a.stop();
      const sent = sends().length;
      const job = await queue.getJob(id);
      if (job === undefined) throw new Error(`no job ${id} in Redis`);
      const { retry } = job.data as { retry?: { dueAt: number } };
      const dueAt = retry?.dueAt ?? 0;
      // Told for an earlier retry, due long ago on Redis's clock.
      await job.updateData({
        ...job.data,
        handedOnDue: { retryDueAt: dueAt - 1000, onRedis: (await redisNow(connection)) - 60_000 },
      });

      const clock = fakeClock(Date.now());
      const b = await startNode(cfg, { sleeps: clock });
      nodes.push(b);
      await vi.waitFor(
        () =>
          expect(linesSaying(b, "route slow: handed on waiting to retry — retry 1/3 in ")).toHaveLength(1),
        { timeout: 10_000, interval: 20 },
      );
      await vi.waitFor(() => expect(clock.pendingTimers()).toBe(1), { timeout: 10_000, interval: 20 });
      expect(sends()).toHaveLength(sent);
    } finally {
      await queue.close();
      connection.disconnect();
    }
  });

  it("is sent at once, from its first part, by an instance whose route now delivers to another target", async () => {
    const { cfg, log, id, connection, queue } = slowRoute("t-1");
    // The next instance's config (a reload, or a rolling change): the route delivers to Discord now.
    const platforms = cfg.platforms as { webhook: { routes: Record<string, Record<string, unknown>> } };
    const moved = {
      ...cfg,
      platforms: {
        ...platforms,
        discord: { enabled: true, token: "D", base_url: discord.url },
        webhook: {
          ...platforms.webhook,
          routes: {
            slow: { ...platforms.webhook.routes.slow, deliver: "discord", deliver_extra: { chat_id: "777" } },
          },
        },
      },
    };
    try {
      const a = await startNode(cfg, { sleeps: fakeClock(Date.now()), drainTimeoutMs: 200 });
      nodes.push(a);
      const answer = await postJson(a.url("/webhooks/slow"), JSON.stringify({ n: "t-1" }), {
        "X-Request-Id": "t-1",
      });
      expect(answer.status).toBe(202);
      await vi.waitFor(async () => expect(await deliveriesRetrying(a)).toBe(1), {
        timeout: 10_000,
        interval: 20,
      });
      await a.stop();
      const job = await queue.getJob(id);
      if (job === undefined) throw new Error(`no job ${id} in Redis`);
      expect((job.data as { retry?: { target?: string } }).retry?.target).toBe("telegram");

      // Its clock never moves: a wait for Telegram's Retry-After, or a retry count carried on, would show.
      const b = await startNode(moved, { sleeps: fakeClock(Date.now()) });
      nodes.push(b);
      await vi.waitFor(async () => expect(await queue.getJobState(id)).toBe("completed"), {
        timeout: 10_000,
        interval: 20,
      });
      expect(sentContents(discord)).toEqual(["event t-1"]);
      expect(linesSaying(b, "handed on waiting to retry")).toHaveLength(0);
      expect(agentRuns(log)).toEqual(["t-1"]);
    } finally {
      await queue.close();
      connection.disconnect();
    }
  });
});
