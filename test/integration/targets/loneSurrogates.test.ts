import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeApi } from "../../fakes/httpFake.js";
import { sentTexts, startFakeTelegram } from "../../fakes/telegram.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * JSON lets a payload carry a lone surrogate (`"\ud800"`): valid JSON, but no Unicode text. Rendered into
 * a message and sent as is, it reaches Telegram as an escape that is no UTF-8, and the Bot API refuses
 * the whole message. The message is delivered with U+FFFD in its place.
 */
const OPEN = "INSECURE_NO_AUTH";
let telegram: FakeApi;
let gw: TestGateway;
beforeAll(async () => {
  telegram = await startFakeTelegram();
  gw = await startTestGateway({
    config: webhookConfig(
      {
        note: {
          secret: OPEN,
          prompt: "Alert: {title}",
          deliver: "telegram",
          deliver_only: true,
          deliver_extra: { chat_id: "-100" },
        },
      },
      { rate_limit: 1000 },
      { platforms: { telegram: { enabled: true, token: "1:T", base_url: telegram.url } } },
    ),
  });
});
afterAll(async () => {
  await gw.stop();
  await telegram.close();
});

describe("a lone surrogate in payload text", () => {
  it("is delivered as U+FFFD (a well-formed pair is kept)", async () => {
    const res = await postJson(gw.url("/webhooks/note"), { title: "disk \ud800 full \udfff 😀" });
    expect(res).toMatchObject({ status: 200, body: { status: "delivered" } });
    expect(sentTexts(telegram)).toEqual(["Alert: disk \ufffd full \ufffd 😀"]);
  });
});
