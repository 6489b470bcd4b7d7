import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * Spec 5 rule 6: payload text is untrusted. In Matrix an `@room` (or a member's name) in a message body
 * notifies the whole room through the legacy push rules; an event carrying `m.mentions` turns those rules
 * off (Matrix v1.7 intentional mentions), so every message is sent with an empty `m.mentions`.
 */
const OPEN = "INSECURE_NO_AUTH";
let matrix: FakeApi;
let gw: TestGateway;
beforeAll(async () => {
  matrix = await startFakeApi((r) =>
    r.method === "GET" ? { json: { user_id: "@svc:example.org" } } : { json: { event_id: "$1" } },
  );
  gw = await startTestGateway({
    config: webhookConfig(
      {
        alert: {
          secret: OPEN,
          prompt: "Alert: {summary}",
          deliver: "matrix",
          deliver_only: true,
          deliver_extra: { chat_id: "!ops:example.org" },
        },
      },
      { rate_limit: 1000 },
      { platforms: { matrix: { enabled: true, token: "MX-TOKEN", base_url: matrix.url } } },
    ),
  });
});
afterAll(async () => {
  await gw.stop();
  await matrix.close();
});

describe("matrix: mentions from payload text never notify", () => {
  it("sends m.text with the body unchanged and an empty m.mentions (no @room or name pings)", async () => {
    const res = await postJson(gw.url("/webhooks/alert"), { summary: "@room disk full @alice:example.org" });
    expect(res).toMatchObject({ status: 200, body: { status: "delivered", target: "matrix" } });
    const sent = matrix.requests.filter((r) => r.method === "PUT");
    expect(sent).toHaveLength(1);
    expect(sent[0]?.path).toMatch(
      /^\/_matrix\/client\/v3\/rooms\/!ops%3Aexample\.org\/send\/m\.room\.message\//,
    );
    expect(sent[0]?.headers.authorization).toBe("Bearer MX-TOKEN");
    expect(sent[0]?.json).toEqual({
      msgtype: "m.text",
      body: "Alert: @room disk full @alice:example.org",
      "m.mentions": {},
    });
  });
});
