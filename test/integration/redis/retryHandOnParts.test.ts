import { describe, expect, it, vi } from "vitest";
import { fakeClock } from "../../helpers/gateway.js";
import { startNode } from "../../helpers/redisCluster.js";
import { splitHandOnSuite } from "../../helpers/splitMessage.js";
import { agentRuns, handOnRoute, linesSaying } from "../../helpers/telegramHandOn.js";

/**
 * docs/delivery-targets.md ("Retries") and docs/durability.md, with state.backend: redis: a reply split
 * into 3 Telegram messages whose 2nd is answered 429 `Retry-After: 120` is handed on (the instance stops
 * past its drain while it waits) and the instance that takes it sends parts 2 and 3 only, the 2nd's
 * retries counted on from the attempt made: part 1 goes out once in all. The platform is a Telegram fake
 * on loopback; the instances' retries wait on the test's clocks.
 */
const CHAT = "-301";
const RETRY_AFTER_S = 120;
const hand = splitHandOnSuite(CHAT, RETRY_AFTER_S);

describe("state.backend: redis — a split message handed on while it waits to retry a part", {
  timeout: 30_000,
}, () => {
  it("is sent on by the next instance from the part it retries, that part's attempts counted on", async () => {
    const { cfg, log, id, connection, queue } = handOnRoute(hand.world, {
      route: "long",
      prompt: "{text}",
      chat: CHAT,
      deliveryId: "p-1",
    });
    // Refused on the first instance, and once more on the next one.
    hand.parts.refuseSecond(2);
    try {
      // Its retry waits on a clock that never moves: the stop's drain (0.2 s) ends with the delivery waiting.
      const a = await hand.sendUntilRetrying(cfg, fakeClock(Date.now()), "long", "p-1");
      expect(linesSaying(a, `retry 1/3 in ${RETRY_AFTER_S * 1000} ms`)).toHaveLength(1);
      await a.stop();
      expect(hand.parts.sent()).toEqual([1, 2]);

      // Kept with the reply: the 1st part was delivered, the 2nd's attempt made; handed on at once.
      const job = await queue.getJob(id);
      if (job === undefined) throw new Error(`no job ${id} in Redis`);
      expect(await job.getState()).toBe("waiting");
      const { retry } = job.data as { retry?: { attempts: number; partsDelivered?: number } };
      expect(retry?.attempts).toBe(1);

      const clock = fakeClock(Date.now());
      const b = await startNode(cfg, { sleeps: clock });
      hand.nodes.push(b);
      await vi.waitFor(
        () => expect(linesSaying(b, "handed on waiting to retry — retry 1/3 in ")).toHaveLength(1),
        {
          timeout: 10_000,
          interval: 20,
        },
      );
      await vi.waitFor(() => expect(clock.pendingTimers()).toBe(1), { timeout: 10_000, interval: 20 });
      expect(hand.parts.sent()).toEqual([1, 2]);

      // The 2nd part's retry, refused again: its 2nd retry, not a 1st.
      clock.advance(RETRY_AFTER_S * 1000);
      await vi.waitFor(() => expect(hand.parts.sent()).toEqual([1, 2, 2]), { timeout: 10_000, interval: 20 });
      await vi.waitFor(() => expect(linesSaying(b, "retry 2/3 in 120000 ms")).toHaveLength(1), {
        timeout: 10_000,
        interval: 20,
      });
      await vi.waitFor(() => expect(clock.pendingTimers()).toBe(1), { timeout: 10_000, interval: 20 });
      expect(linesSaying(b, "retry 1/3 in 120000 ms")).toHaveLength(0);
      // Stored as this instance times it: what the stop said of the 1st retry's due time is not kept with it.
      await vi.waitFor(
        async () => {
          const stored = (await queue.getJob(id))?.data as { retry?: { attempts: number } } | undefined;
          expect(stored?.retry?.attempts).toBe(2);
          expect(stored).not.toHaveProperty("handedOnDue");
        },
        { timeout: 10_000, interval: 20 },
      );

      clock.advance(RETRY_AFTER_S * 1000);
      await vi.waitFor(async () => expect(await queue.getJobState(id)).toBe("completed"), {
        timeout: 10_000,
        interval: 20,
      });
      expect(linesSaying(b, "telegram: delivered for route long")).toHaveLength(1);
      expect(hand.parts.sent()).toEqual([1, 2, 2, 2, 3]);
      expect(agentRuns(log)).toEqual(["p-1"]);
      // What the first instance stored (the parts delivered before the one it retries), and the next one said.
      expect(retry?.partsDelivered).toBe(1);
      expect(linesSaying(b, "handed on waiting to retry")[0]?.msg).toMatch(
        / ms \(part 2; part 1 was delivered\)$/,
      );
    } finally {
      await queue.close();
      connection.disconnect();
    }
  });
});
