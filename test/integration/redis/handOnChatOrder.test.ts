import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { jobIdOf } from "../../../src/io/state/redis/sharedQueue.js";
import { seenKey } from "../../../src/streams/stages/idempotency.js";
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
 * docs/delivery-targets.md ("Retries") and docs/durability.md, with state.backend: redis: two replies to one
 * chat that a stop hands on together — the first waiting to retry (429, retry_after 20), the second waiting
 * its turn behind it — go out in that order from the instance that takes them (the same home restarted, or a
 * second instance already running), both taken by one worker with two slots. Before, the stop let them run
 * at once side by side, the second (with less to write) went into the wait list first, and it was delivered
 * at once, 20 s before the first. The platform is a Telegram fake on loopback; the retries wait on the
 * test's clocks.
 */
const RETRY_AFTER_S = 20;
let world: HandOnWorld | undefined;
const nodes: ClusterNode[] = [];
/** The texts of the replies holding "RL" the fake refused once already. */
const refused = new Set<string>();

beforeAll(async () => {
  world = await startHandOnWorld();
  answerSends(world.tg, (text) => {
    if (text.includes("RL") && !refused.has(text)) {
      refused.add(text);
      return telegramTooMany(RETRY_AFTER_S);
    }
    return { json: { ok: true, result: { message_id: refused.size + 1, chat: { id: 7 }, text } } };
  });
});
afterAll(async () => {
  if (world !== undefined) await stopHandOnWorld(world, nodes);
});

const sentTo = (chat: string): string[] =>
  (world?.tg.requests ?? [])
    .filter(
      (r) => r.path.endsWith("/sendMessage") && String((r.json as { chat_id?: unknown }).chat_id) === chat,
    )
    .map((r) => String((r.json as { text?: unknown }).text));

async function post(node: ClusterNode, id: string, text: string): Promise<void> {
  const answer = await postJson(node.url("/webhooks/ci"), JSON.stringify({ text }), { "X-Request-Id": id });
  expect(answer.status).toBe(202);
}

describe("state.backend: redis — two deliveries to one chat a stop hands on together", {
  timeout: 40_000,
}, () => {
  it.each([
    ["the same home restarted", "7", false],
    ["a second instance running before the stop", "8", true],
  ])(
    "keep their order when %s takes them: the one waiting its turn goes out after the retry",
    async (_, chat, second) => {
      const route = handOnRoute(world as HandOnWorld, {
        route: "ci",
        prompt: "{text}",
        chat,
        deliveryId: "rl-10",
      });
      const cfg = { ...route.cfg, agent: { ...(route.cfg.agent as object), max_concurrent_runs: 2 } };
      const ten = `RL ten ${chat}`;
      const eleven = `eleven same chat ${chat}`;
      try {
        // A's retries wait on a clock that never moves: its stop's drain (0.2 s) ends with both waiting.
        const a = await startNode(cfg, { sleeps: fakeClock(Date.now()), drainTimeoutMs: 200 });
        nodes.push(a);
        await post(a, "rl-10", ten);
        await vi.waitFor(async () => expect(await deliveriesRetrying(a)).toBe(1), {
          timeout: 10_000,
          interval: 20,
        });
        await post(a, "rl-11", eleven);
        // Its turn behind the retry: out of its slot too.
        await vi.waitFor(async () => expect(await deliveriesRetrying(a)).toBe(2), {
          timeout: 10_000,
          interval: 20,
        });
        expect(sentTo(chat)).toEqual([ten]);

        const clock = fakeClock(Date.now());
        const start = () => startNode(cfg, { sleeps: clock });
        const early = second ? await start() : undefined;
        if (early !== undefined) nodes.push(early);
        await a.stop();
        const b = early ?? (await start());
        if (early === undefined) nodes.push(b);

        // Both taken, each out of its slot: the retry waits out the rest of its 20 s, the other its turn behind it.
        await vi.waitFor(
          async () => {
            const outside = await deliveriesRetrying(b);
            expect(outside === 2 || sentTo(chat).length > 1).toBe(true);
          },
          { timeout: 10_000, interval: 20 },
        );
        expect(sentTo(chat)).toEqual([ten]);
        const waits = linesSaying(b, "route ci: handed on waiting to retry — retry 1/3 in ");
        expect(waits).toHaveLength(1);

        await vi.waitFor(
          () => {
            clock.advance(RETRY_AFTER_S * 1000);
            expect(sentTo(chat)).toHaveLength(3);
          },
          { timeout: 10_000, interval: 20 },
        );
        expect(sentTo(chat)).toEqual([ten, ten, eleven]);
        // The platform has the message before the gateway has its answer and logs the delivery.
        await vi.waitFor(() => expect(linesSaying(b, "telegram: delivered for route ci")).toHaveLength(2), {
          timeout: 10_000,
          interval: 20,
        });
        // Neither agent ran again: the replies were delivered as stored.
        expect(agentRuns(route.log)).toEqual(["rl-10", "rl-11"]);
        for (const id of [route.id, jobIdOf(seenKey("ci", "rl-11"))])
          await vi.waitFor(async () => expect(await route.queue.getJobState(id)).toBe("completed"), {
            timeout: 10_000,
            interval: 20,
          });
      } finally {
        for (const node of nodes.splice(0)) await node.stop();
        await route.queue.close();
        route.connection.disconnect();
      }
    },
  );
});
