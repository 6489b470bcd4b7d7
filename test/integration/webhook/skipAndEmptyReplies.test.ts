import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { FakeApi } from "../../fakes/httpFake.js";
import { type FakeModel, startFakeOpenAI } from "../../fakes/openaiServer.js";
import { startFakeTelegram } from "../../fakes/telegram.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * An agent reply of `SKIP` is delivered as the text `SKIP`, and an empty reply is still delivered (the
 * platform's refusal of an empty message is the delivery's failure), as docs/delivery-targets.md says.
 */
let gw: TestGateway;
let telegram: FakeApi;
let model: FakeModel;
beforeAll(async () => {
  telegram = await startFakeTelegram();
  model = await startFakeOpenAI();
  gw = await startTestGateway({
    config: webhookConfig(
      {
        ci: {
          secret: "INSECURE_NO_AUTH",
          deliver: "telegram",
          prompt: "Build {n}",
          deliver_extra: { chat_id: "-100" },
        },
      },
      {},
      {
        agent: { provider: "openai", model: "m", base_url: model.baseUrl, api_key: "k", retries: 0 },
        platforms: { telegram: { enabled: true, token: "1:tok", base_url: telegram.url } },
      },
    ),
  });
});
afterAll(async () => {
  await gw?.stop();
  await telegram?.close();
  await model?.close();
});

const sent = () =>
  telegram.requests
    .filter((r) => r.path.endsWith("/sendMessage"))
    .map((r) => (r.json as { text: string }).text);

describe("SKIP and empty agent replies", () => {
  it("SKIP goes out as the text SKIP", async () => {
    model.script({ text: "SKIP" });
    expect((await postJson(gw.url("/webhooks/ci"), { n: 1 }, { "x-request-id": "skip-1" })).status).toBe(202);
    await vi.waitFor(() => expect(sent()).toEqual(["SKIP"]), { timeout: 20_000 });
  });

  it("an empty reply is still sent once; Telegram's refusal is logged as the delivery's failure", async () => {
    model.script({ text: "" });
    expect((await postJson(gw.url("/webhooks/ci"), { n: 2 }, { "x-request-id": "empty-1" })).status).toBe(
      202,
    );
    await vi.waitFor(() => expect(sent()).toEqual(["SKIP", ""]), { timeout: 20_000 });
    await vi.waitFor(
      () =>
        expect(gw.logs().map((l) => l.msg)).toContainEqual(
          expect.stringMatching(
            /^\[delivery\] telegram failed for route ci: telegram: sendMessage: HTTP 400 — Bad Request: message text is empty/,
          ),
        ),
      { timeout: 20_000 },
    );
  });
});
