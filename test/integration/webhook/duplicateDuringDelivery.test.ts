import { describe, expect, it, vi } from "vitest";
import { historyDir, readHistory, summarizeHistory } from "../../../src/io/stores/deliveryHistory.js";
import type { FakeReply } from "../../fakes/httpFake.js";
import { sentTexts, startFakeTelegram } from "../../fakes/telegram.js";
import { gatewayPerTest, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * Spec 6: a duplicate delivery answers 200 duplicate and causes no second delivery. A sender that
 * retries on a timeout (or sends twice at once) can send the duplicate while the original's direct
 * delivery is still under way; answered `duplicate` at once, it was told the event was handled even when
 * the original then failed (502, its id forgotten), and the event was lost. The duplicate waits for the
 * original now: `duplicate` when it was delivered, 502 like it when it failed.
 */

const perTest = gatewayPerTest();

async function start() {
  const telegram = await startFakeTelegram();
  const gw = await perTest.start({
    config: webhookConfig(
      {
        notify: {
          secret: "INSECURE_NO_AUTH",
          deliver: "telegram",
          deliver_only: true,
          prompt: "Deploy {n}",
          deliver_extra: { chat_id: "7" },
        },
      },
      { rate_limit: 1000 },
      { platforms: { telegram: { enabled: true, token: "123:abc", base_url: telegram.url } } },
    ),
  });
  return { telegram, gw };
}

type Fake = Awaited<ReturnType<typeof startFakeTelegram>>;

/** The first sendMessage is answered `reply` (after its delay); getMe and later calls as the fake does. */
function slowSendMessage(fake: Fake, reply: FakeReply): void {
  let first = true;
  const ok = { json: { ok: true, result: { message_id: 2, chat: { id: 7 }, text: "" } } };
  fake.setHandler((request) => {
    if (!request.path.endsWith("/sendMessage"))
      return { json: { ok: true, result: { id: 42, is_bot: true, username: "svc_test_bot" } } };
    if (!first) return ok;
    first = false;
    return reply;
  });
}

const sendMessages = (fake: Awaited<ReturnType<typeof startFakeTelegram>>) =>
  fake.requests.filter((r) => r.path.endsWith("/sendMessage")).length;

describe("a duplicate sent while the original's direct delivery is under way", { timeout: 20_000 }, () => {
  it("the original fails: the duplicates are 502 too (not duplicate), and the sender's next retry is delivered", async () => {
    const { telegram, gw } = await start();
    try {
      slowSendMessage(telegram, {
        status: 400,
        json: { ok: false, error_code: 400, description: "Bad Request: chat not found" },
        delayMs: 1000,
      });
      const original = postJson(gw.url("/webhooks/notify"), { n: 1 }, { "X-Request-ID": "slow-1" });
      // The original's sendMessage is at the platform (answered after its delay).
      await vi.waitFor(() => expect(sendMessages(telegram)).toBe(1), { timeout: 5000, interval: 10 });
      const duplicates = await Promise.all(
        [1, 2, 3].map(() => postJson(gw.url("/webhooks/notify"), { n: 1 }, { "X-Request-ID": "slow-1" })),
      );
      expect((await original).status).toBe(502);
      expect(duplicates.map((d) => [d.status, d.body])).toEqual(
        [1, 2, 3].map(() => [502, { error: "Delivery failed" }]),
      );
      // One attempt (refused) for the four requests; the retry's is delivered.
      expect(sendMessages(telegram)).toBe(1);
      const retry = await postJson(gw.url("/webhooks/notify"), { n: 1 }, { "X-Request-ID": "slow-1" });
      expect(retry.body).toMatchObject({ status: "delivered", delivery_id: "slow-1" });
      expect(sentTexts(telegram)).toEqual(["Deploy 1", "Deploy 1"]);
    } finally {
      await telegram.close();
    }
  });

  it("the delivery history shows the failed delivery on the original's 502 only, and the retry's delivery on its 200", async () => {
    const { telegram, gw } = await start();
    try {
      slowSendMessage(telegram, {
        status: 400,
        json: { ok: false, error_code: 400, description: "Bad Request: chat not found" },
        delayMs: 1000,
      });
      const original = postJson(gw.url("/webhooks/notify"), { n: 3 }, { "X-Request-ID": "slow-3" });
      await vi.waitFor(() => expect(sendMessages(telegram)).toBe(1), { timeout: 5000, interval: 10 });
      const duplicate = await postJson(gw.url("/webhooks/notify"), { n: 3 }, { "X-Request-ID": "slow-3" });
      expect([(await original).status, duplicate.status]).toEqual([502, 502]);
      const retry = await postJson(gw.url("/webhooks/notify"), { n: 3 }, { "X-Request-ID": "slow-3" });
      expect(retry.body).toMatchObject({ status: "delivered", delivery_id: "slow-3" });
      // Newest first: the retry made the delivery that reached the platform; the duplicate that waited for
      // the original made none of its own, whatever its 502 says.
      await vi.waitFor(
        () =>
          expect(
            summarizeHistory(readHistory(historyDir(gw.home.dir))).map((row) => [
              row.request?.status,
              row.request?.outcome,
              row.delivery?.outcome,
            ]),
          ).toEqual([
            [200, "delivered", "ok"],
            [502, "Delivery failed", undefined],
            [502, "Delivery failed", "failed"],
          ]),
        { timeout: 10_000 },
      );
    } finally {
      await telegram.close();
    }
  });

  it("the original is delivered: the duplicates are 200 duplicate and nothing is sent twice", async () => {
    const { telegram, gw } = await start();
    try {
      slowSendMessage(telegram, {
        json: { ok: true, result: { message_id: 1, chat: { id: 7 }, text: "Deploy 2" } },
        delayMs: 1000,
      });
      const original = postJson(gw.url("/webhooks/notify"), { n: 2 }, { "X-Request-ID": "slow-2" });
      // The original's sendMessage is at the platform (answered after its delay).
      await vi.waitFor(() => expect(sendMessages(telegram)).toBe(1), { timeout: 5000, interval: 10 });
      const duplicates = await Promise.all(
        [1, 2, 3].map(() => postJson(gw.url("/webhooks/notify"), { n: 2 }, { "X-Request-ID": "slow-2" })),
      );
      expect((await original).body).toMatchObject({ status: "delivered", delivery_id: "slow-2" });
      expect(duplicates.map((d) => [d.status, d.body])).toEqual(
        [1, 2, 3].map(() => [200, { status: "duplicate" }]),
      );
      expect(sendMessages(telegram)).toBe(1);
    } finally {
      await telegram.close();
    }
  });
});
