import { describe, expect, it, vi } from "vitest";
import type { FakeReply } from "../../fakes/httpFake.js";
import { fakeClock } from "../../helpers/gateway.js";
import { startNode } from "../../helpers/redisCluster.js";
import { splitHandOnSuite, THIRD } from "../../helpers/splitMessage.js";
import { agentRuns, handOnRoute, linesSaying } from "../../helpers/telegramHandOn.js";

/**
 * docs/delivery-targets.md ("Retries") and docs/durability.md, with state.backend: redis: a reply split
 * into 3 Telegram messages whose 2nd is answered 429 once; the retry goes through, and the instance is
 * stopped (past its drain) while it sends the 3rd. What it stored by then says 2 parts went out (what a
 * killed instance leaves too), and the instance that takes the job sends the 3rd only: no part twice.
 */
const CHAT = "-302";
const RETRY_AFTER_S = 120;
/** Set while the fake holds its answer to the 3rd part: called, it answers. */
let holdThird: ((reply: FakeReply) => void) | undefined;
let holdingThird = false;

const hand = splitHandOnSuite(CHAT, RETRY_AFTER_S, {
  instead: (text) => {
    if (!text.includes(THIRD) || !holdingThird) return undefined;
    holdingThird = false;
    return new Promise<FakeReply>((resolve) => {
      holdThird = resolve;
    });
  },
  beforeStop: () => holdThird?.({ status: 500, json: { ok: false } }),
});

describe("state.backend: redis — a split message handed on as it sends the parts after a retry", {
  timeout: 30_000,
}, () => {
  it("stores each part's send, so the next instance sends only the parts not yet delivered", async () => {
    const { cfg, log, id, connection, queue } = handOnRoute(hand.world, {
      route: "later",
      prompt: "{text}",
      chat: CHAT,
      deliveryId: "l-1",
    });
    hand.parts.refuseSecond(1);
    holdingThird = true;
    try {
      const clockA = fakeClock(Date.now());
      const a = await hand.sendUntilRetrying(cfg, clockA, "later", "l-1");
      await vi.waitFor(() => expect(clockA.pendingTimers()).toBe(1), { timeout: 10_000, interval: 20 });
      // The 2nd part's retry goes through; the 3rd is sent and its answer held.
      clockA.advance(RETRY_AFTER_S * 1000);
      await vi.waitFor(() => expect(hand.parts.sent()).toEqual([1, 2, 2, 3]), {
        timeout: 10_000,
        interval: 20,
      });

      // What an instance killed now leaves in Redis: parts 1 and 2 delivered, the 3rd to send at once.
      const job = await queue.getJob(id);
      if (job === undefined) throw new Error(`no job ${id} in Redis`);
      const { retry } = job.data as { retry?: { partsDelivered?: number; attempts: number; dueAt: number } };
      expect(retry?.partsDelivered).toBe(2);
      expect(retry?.attempts).toBe(0);
      expect(retry?.dueAt).toBeLessThanOrEqual(Date.now());

      // Stopped while the 3rd part's request is under way: handed on at once.
      await a.stop();
      const b = await startNode(cfg, { sleeps: fakeClock(Date.now()) });
      hand.nodes.push(b);
      if ((await queue.getJobState(id)) === "delayed") await (await queue.getJob(id))?.promote();
      await vi.waitFor(async () => expect(await queue.getJobState(id)).toBe("completed"), {
        timeout: 10_000,
        interval: 20,
      });
      expect(hand.parts.sent()).toEqual([1, 2, 2, 3, 3]);
      expect(linesSaying(b, "telegram: delivered for route later")).toHaveLength(1);
      expect(linesSaying(b, "handed on — goes on now")[0]?.msg).toMatch(
        /goes on now \(part 3; parts 1-2 were delivered\)$/,
      );
      expect(agentRuns(log)).toEqual(["l-1"]);
    } finally {
      await queue.close();
      connection.disconnect();
    }
  });
});
