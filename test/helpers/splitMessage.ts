import { afterAll, beforeAll, expect, vi } from "vitest";
import type { FakeApi, FakeReply } from "../fakes/httpFake.js";
import type { FakeClock } from "./gateway.js";
import { postJson } from "./http.js";
import { type ClusterNode, startNode } from "./redisCluster.js";
import {
  answerSends,
  deliveriesRetrying,
  type HandOnWorld,
  startHandOnWorld,
  stopHandOnWorld,
  telegramTooMany,
} from "./telegramHandOn.js";

/**
 * For the tests of a reply split into 3 Telegram messages handed on between instances: the reply, and a
 * Telegram fake that refuses its 2nd part for now as often as the test says.
 */

/** Three paragraphs, each under Telegram's 4096 characters, together over two messages' worth. */
export const FIRST = "a".repeat(4000);
export const SECOND = "b".repeat(4000);
export const THIRD = "c".repeat(1000);
export const SPLIT_TEXT = `${FIRST}\n\n${SECOND}\n\n${THIRD}`;

export interface SplitPartsFake {
  /** The fake answers the 2nd part 429 (`Retry-After`) this many more times. */
  refuseSecond(times: number): void;
  /** Which part each message sent to the chat holds: 1, 2 or 3. */
  sent(): number[];
}

/**
 * Has the Telegram fake `tg` send each part to `chat`, but for the refusals of the 2nd part and what
 * `instead` answers for a text (when it answers).
 */
export function answerSplitParts(
  tg: FakeApi,
  chat: string,
  retryAfterS: number,
  instead: (text: string) => Promise<FakeReply> | undefined = () => undefined,
): SplitPartsFake {
  let nextId = 1;
  let refusals = 0;
  answerSends(tg, (text) => {
    if (text.includes(SECOND) && refusals > 0) {
      refusals -= 1;
      return telegramTooMany(retryAfterS);
    }
    return (
      instead(text) ?? {
        json: { ok: true, result: { message_id: nextId++, chat: { id: Number(chat) }, text } },
      }
    );
  });
  return {
    refuseSecond: (times) => {
      refusals = times;
    },
    sent: () =>
      tg.requests
        .filter(
          (r) =>
            r.path.endsWith("/sendMessage") && String((r.json as { chat_id?: unknown }).chat_id) === chat,
        )
        .map((r) => {
          const text = String((r.json as { text?: unknown }).text);
          return text.includes(FIRST) ? 1 : text.includes(SECOND) ? 2 : text.includes(THIRD) ? 3 : 0;
        }),
  };
}

/**
 * Registers a suite's hooks: before all, the hand-on world with its Telegram fake answering the split parts
 * sent to `chat` (see `answerSplitParts`); after all, `beforeStop`, then the instances pushed onto `nodes`
 * and the world stopped.
 */
export function splitHandOnSuite(
  chat: string,
  retryAfterS: number,
  options: {
    readonly instead?: (text: string) => Promise<FakeReply> | undefined;
    readonly beforeStop?: () => void;
  } = {},
) {
  let world: HandOnWorld | undefined;
  let parts: SplitPartsFake | undefined;
  const nodes: ClusterNode[] = [];
  beforeAll(async () => {
    world = await startHandOnWorld();
    parts = answerSplitParts(world.tg, chat, retryAfterS, options.instead);
  });
  afterAll(async () => {
    options.beforeStop?.();
    if (world !== undefined) await stopHandOnWorld(world, nodes);
  });
  const ready = <T>(value: T | undefined, name: string): T => {
    if (value === undefined) throw new Error(`splitHandOnSuite: ${name} is set in beforeAll`);
    return value;
  };
  return {
    get world() {
      return ready(world, "world");
    },
    get parts() {
      return ready(parts, "parts");
    },
    nodes,
    /**
     * Starts an instance on `config` whose retries wait on `sleeps` (its stop's drain: 0.2 s), posts it the
     * split reply as delivery `deliveryId` of `route`, and waits until it waits to retry the 2nd part.
     */
    async sendUntilRetrying(
      config: Record<string, unknown>,
      sleeps: FakeClock,
      route: string,
      deliveryId: string,
    ): Promise<ClusterNode> {
      const node = await startNode(config, { sleeps, drainTimeoutMs: 200 });
      nodes.push(node);
      const answer = await postJson(node.url(`/webhooks/${route}`), JSON.stringify({ text: SPLIT_TEXT }), {
        "X-Request-Id": deliveryId,
      });
      expect(answer.status).toBe(202);
      await vi.waitFor(async () => expect(await deliveriesRetrying(node)).toBe(1), {
        timeout: 10_000,
        interval: 20,
      });
      return node;
    },
  };
}
