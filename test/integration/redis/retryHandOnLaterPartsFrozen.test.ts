import { describe, expect, it, vi } from "vitest";
import { fakeClock } from "../../helpers/gateway.js";
import { splitHandOnSuite } from "../../helpers/splitMessage.js";
import { handOnRoute } from "../../helpers/telegramHandOn.js";

/**
 * docs/durability.md ("Runs already running go on; their finish is recorded when Redis is back"), with
 * state.backend: redis: a reply split into 3 Telegram messages whose 2nd is answered 429 once. Redis freezes
 * (answers nothing) while that retry waits; the retry goes through, and the 3rd part goes out at once: the
 * write that would store that the 2nd was delivered does not hold it back.
 */
const CHAT = "-302";
const RETRY_AFTER_S = 120;
const hand = splitHandOnSuite(CHAT, RETRY_AFTER_S);

describe("state.backend: redis — the parts a split message sends after a retry, with Redis frozen", {
  timeout: 30_000,
}, () => {
  it("a Redis frozen as the retry goes through holds back none of the later parts; the finish is recorded once it is back", async () => {
    const { cfg, id, connection, queue } = handOnRoute(hand.world, {
      route: "later",
      prompt: "{text}",
      chat: CHAT,
      deliveryId: "l-1",
    });
    hand.parts.refuseSecond(1);
    try {
      const clockA = fakeClock(Date.now());
      const _a = await hand.sendUntilRetrying(cfg, clockA, "later", "l-1");
      await vi.waitFor(() => expect(clockA.pendingTimers()).toBe(1), { timeout: 10_000, interval: 20 });
      // Redis freezes while the retry waits; the retry goes through (Telegram is fine), and the 3rd part
      // goes out without waiting for Redis to store that the 2nd did.
      hand.world.redis.freeze();
      try {
        clockA.advance(RETRY_AFTER_S * 1000);
        await vi.waitFor(() => expect(hand.parts.sent()).toEqual([1, 2, 2, 3]), {
          timeout: 10_000,
          interval: 20,
        });
      } finally {
        hand.world.redis.thaw();
      }
      // Its finish is recorded once Redis is back: the job ends, nothing is sent again.
      await vi.waitFor(async () => expect(await queue.getJobState(id)).toBe("completed"), {
        timeout: 10_000,
        interval: 50,
      });
      expect(hand.parts.sent()).toEqual([1, 2, 2, 3]);
    } finally {
      await queue.close();
      connection.disconnect();
    }
  });
});
