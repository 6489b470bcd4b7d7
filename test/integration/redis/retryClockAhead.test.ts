import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { RecordedRequest } from "../../fakes/httpFake.js";
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
 * docs/delivery-targets.md, "Retries", and docs/operations.md, "Clock changes", with state.backend: redis: an
 * instance whose clock runs 50 s ahead of Redis's (more than the lease of a delivery waiting to retry) does
 * not take that delivery back while it waits, and delivers its reply once. Before, its own worker found the
 * lease (timed on Redis's clock) over at once, took the job back, released it again, about 1000 times (the
 * cap), and each copy posted the reply. The platform is a Telegram fake on loopback that answers the first
 * message 429 with `Retry-After: 60`; the instance's retries wait on the test's clock, and only its Date
 * runs ahead (Redis's clock is the real one).
 */
const CHAT = "-305";
const RETRY_AFTER_S = 60;
let world: HandOnWorld;
let refusing = true;
const nodes: ClusterNode[] = [];

const sends = () =>
  world.tg.requests.filter(
    (r: RecordedRequest) =>
      r.path.endsWith("/sendMessage") && String((r.json as { chat_id?: unknown }).chat_id) === CHAT,
  );

beforeAll(async () => {
  world = await startHandOnWorld();
  answerSends(world.tg, () =>
    refusing
      ? telegramTooMany(RETRY_AFTER_S)
      : { json: { ok: true, result: { message_id: 1, chat: { id: Number(CHAT) } } } },
  );
});
afterAll(async () => {
  vi.useRealTimers();
  await stopHandOnWorld(world, nodes);
});

describe("state.backend: redis — a delivery waiting to retry on an instance whose clock runs ahead of Redis's", {
  timeout: 30_000,
}, () => {
  it("by more than its lease is not taken back by that instance while it waits, and is delivered once", async () => {
    const { cfg, log, prefix, id, connection, queue } = handOnRoute(world, {
      route: "ahead",
      prompt: "event {n}",
      chat: CHAT,
      deliveryId: "a-1",
    });
    const job = `${prefix}:bull:runs:${id}`;
    const taken = async () => Number(await connection.hget(job, "ats"));
    try {
      // Only Date runs ahead, moving with the real time; timers stay real.
      vi.useFakeTimers({ toFake: ["Date"], shouldAdvanceTime: true, advanceTimeDelta: 10 });
      vi.setSystemTime(Date.now() + 50_000);
      const clock = fakeClock(Date.now());
      // A 6 s lease (30 s by default), renewed every 2 s.
      const node = await startNode(cfg, {
        sleeps: clock,
        stall: { lockDurationMs: 6000, stalledIntervalMs: 500 },
      });
      nodes.push(node);
      const answer = await postJson(node.url("/webhooks/ahead"), JSON.stringify({ n: "a-1" }), {
        "X-Request-Id": "a-1",
      });
      expect(answer.status).toBe(202);
      await vi.waitFor(async () => expect(await deliveriesRetrying(node)).toBe(1), {
        timeout: 10_000,
        interval: 20,
      });
      // Its lease set and renewed twice, the job aside in Redis all along.
      const due: string[] = [];
      await vi.waitFor(
        async () => {
          const score = await connection.zscore(`${prefix}:bull:runs:delayed`, id);
          expect(score).not.toBeNull();
          if (score !== null && !due.includes(score)) due.push(score);
          expect(due.length).toBeGreaterThanOrEqual(3);
        },
        { timeout: 10_000, interval: 50 },
      );
      // Taken once, by the run (before, about 1000 times: each copy released again until the cap).
      expect(await taken()).toBe(1);
      expect(await deliveriesRetrying(node)).toBe(1);
      expect(sends()).toHaveLength(1);
      expect(linesSaying(node, "outside their run slots (the cap)")).toEqual([]);

      refusing = false;
      await vi.waitFor(
        () => {
          clock.advance(RETRY_AFTER_S * 1000);
          expect(sends()).toHaveLength(2);
        },
        { timeout: 10_000, interval: 20 },
      );
      await vi.waitFor(async () => expect(await queue.getJobState(id)).toBe("completed"), {
        timeout: 10_000,
        interval: 20,
      });
      expect(await deliveriesRetrying(node)).toBe(0);
      // Refused once, posted once; finished by one more take (its done mark), which delivers nothing.
      expect(sends()).toHaveLength(2);
      expect(linesSaying(node, "telegram: delivered for route ahead")).toHaveLength(1);
      expect(await taken()).toBe(2);
      expect(agentRuns(log)).toEqual(["a-1"]);
    } finally {
      vi.useRealTimers();
      await queue.close();
      connection.disconnect();
    }
  });
});
