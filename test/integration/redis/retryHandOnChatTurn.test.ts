import { describe, expect, it, vi } from "vitest";
import { fakeClock } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { startNode } from "../../helpers/redisCluster.js";
import { splitHandOnSuite } from "../../helpers/splitMessage.js";
import { agentRuns, deliveriesRetrying, handOnRoute, linesSaying } from "../../helpers/telegramHandOn.js";

/**
 * docs/delivery-targets.md ("Retries") and docs/durability.md, with state.backend: redis: a reply split into
 * 3 Telegram messages whose 2nd is answered 429 `Retry-After: 120` is handed on by a stop (past its drain)
 * at once, not when that retry is due: the next instance takes the job, and waits out the rest of the
 * Retry-After in the chat's turn, so a reply to the same chat posted meanwhile goes out after the split
 * message's last parts (a, b, c, hello; before, a, hello, b, c). The platform is a Telegram fake on
 * loopback; the instances' retries wait on the test's clocks.
 */
const CHAT = "-303";
const RETRY_AFTER_S = 120;
const hand = splitHandOnSuite(CHAT, RETRY_AFTER_S);

describe("state.backend: redis — a split message a stop hands on while it waits to retry a part", {
  timeout: 30_000,
}, () => {
  it("is taken by the next instance at once and holds its chat's turn: a reply to the chat posted meanwhile goes out after its last parts", async () => {
    const { cfg, log, id, connection, queue } = handOnRoute(hand.world, {
      route: "turn",
      prompt: "{text}",
      chat: CHAT,
      deliveryId: "t-1",
    });
    hand.parts.refuseSecond(1);
    try {
      // Its retry waits on a clock that never moves: the stop's drain (0.2 s) ends with the delivery waiting.
      const a = await hand.sendUntilRetrying(cfg, fakeClock(Date.now()), "turn", "t-1");
      await a.stop();
      expect(hand.parts.sent()).toEqual([1, 2]);
      // Handed on at once, not left delayed in Redis (where no instance sees it) until its retry is due.
      expect(await queue.getJobState(id)).toBe("waiting");

      const clock = fakeClock(Date.now());
      const b = await startNode(cfg, { sleeps: clock });
      hand.nodes.push(b);
      const answer = await postJson(b.url("/webhooks/turn"), JSON.stringify({ text: "hello" }), {
        "X-Request-Id": "t-2",
      });
      expect(answer.status).toBe(202);
      // The short reply waits its turn behind the handed-on one, out of its run slot as that one is (2 runs
      // outside their slots); before the fix it went out at once, between parts 1 and 2.
      await vi.waitFor(
        async () => {
          const outside = await deliveriesRetrying(b);
          expect(outside === 2 || hand.parts.sent().includes(0)).toBe(true);
        },
        { timeout: 10_000, interval: 20 },
      );
      expect(hand.parts.sent()).toEqual([1, 2]);
      // Not sent before its retry is due: it waits out what is left of the 120 s.
      const waits = linesSaying(b, "route turn: handed on waiting to retry — retry 1/3 in ");
      expect(waits).toHaveLength(1);
      const left = Number(/ in (\d+) ms /.exec(waits[0]?.msg ?? "")?.[1]);
      expect(left).toBeGreaterThan(0);
      expect(left).toBeLessThanOrEqual(RETRY_AFTER_S * 1000);

      await vi.waitFor(
        () => {
          clock.advance(RETRY_AFTER_S * 1000);
          expect(hand.parts.sent()).toHaveLength(5);
        },
        { timeout: 10_000, interval: 20 },
      );
      // The chat reads a, b, c, hello: the 2nd part refused once (429: not posted), then posted once.
      expect(hand.parts.sent()).toEqual([1, 2, 2, 3, 0]);
      await vi.waitFor(async () => expect(await queue.getJobState(id)).toBe("completed"), {
        timeout: 10_000,
        interval: 20,
      });
      expect(linesSaying(b, "telegram: delivered for route turn")).toHaveLength(2);
      expect(agentRuns(log)).toEqual(["t-1", "t-2"]);
    } finally {
      await queue.close();
      connection.disconnect();
    }
  });
});
