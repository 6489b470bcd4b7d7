import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeApi } from "../../fakes/httpFake.js";
import { startFakeTelegram } from "../../fakes/telegram.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * A route's chat is often a template (`chat_id: "{build.chat}"`, as docs/delivery-targets.md shows it) that
 * only some events fill. For an event without the field the text stays `{build.chat}`, which no platform
 * has as a chat: it was sent as the chat id, and the platform's refusal ("chat not found") did not say the
 * event lacked the field. As with a chat_id that renders empty, the message is not sent anywhere else.
 */
const OPEN = "INSECURE_NO_AUTH";
let telegram: FakeApi;
let gw: TestGateway;
beforeAll(async () => {
  telegram = await startFakeTelegram();
  gw = await startTestGateway({
    config: webhookConfig(
      {
        ci: {
          secret: OPEN,
          prompt: "Build {build.number}: {build.status}",
          deliver: "telegram",
          deliver_only: true,
          deliver_extra: { chat_id: "{build.chat}" },
        },
      },
      { rate_limit: 1000 },
      {
        platforms: {
          telegram: { enabled: true, token: "1:T", base_url: telegram.url, home_channel: "-100999" },
        },
      },
    ),
  });
});
afterAll(async () => {
  await gw.stop();
  await telegram.close();
});

const sends = () => telegram.requests.filter((r) => r.path.endsWith("/sendMessage")).map((r) => r.json);

describe("a chat_id template the event does not fill", () => {
  it("an event with the field is delivered to its chat", async () => {
    const res = await postJson(gw.url("/webhooks/ci"), {
      build: { number: 1, status: "ok", chat: "-100555" },
    });
    expect(res).toMatchObject({ status: 200, body: { status: "delivered" } });
    expect(sends().at(-1)).toEqual({ chat_id: -100555, text: "Build 1: ok" });
  });

  it("an event without it is refused naming the template, and sent neither as {build.chat} nor to the home channel", async () => {
    const before = sends().length;
    const seen = gw.logs().length;
    const res = await postJson(gw.url("/webhooks/ci"), { build: { number: 2, status: "failed" } });
    expect(res.status).toBe(502);
    expect(sends()).toHaveLength(before);
    expect(
      gw
        .logs()
        .slice(seen)
        .some((l) =>
          l.msg.includes(
            'telegram: deliver_extra.chat_id of route "ci" did not resolve ("{build.chat}" is a template the event did not fill: it has no such field) — the message is not sent (never redirected to another chat)',
          ),
        ),
    ).toBe(true);
  });

  it("an event whose field is null is refused saying so, and sent neither as the chat null nor to the home channel", async () => {
    const before = sends().length;
    const seen = gw.logs().length;
    const res = await postJson(gw.url("/webhooks/ci"), { build: { number: 3, status: "ok", chat: null } });
    expect(res.status).toBe(502);
    expect(sends()).toHaveLength(before);
    expect(
      gw
        .logs()
        .slice(seen)
        .some((l) =>
          l.msg.includes(
            'telegram: deliver_extra.chat_id of route "ci" did not resolve (the event\'s field is null) — the message is not sent (never redirected to another chat)',
          ),
        ),
    ).toBe(true);
  });
});
