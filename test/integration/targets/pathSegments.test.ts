import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * Spec 5 rule 6: payload text is untrusted. A chat or thread id rendered from the payload goes into the
 * platform's request path percent-encoded, but encoding leaves `..` as it is, and URL parsing turns
 * `/channels/../messages` into `/messages`: another endpoint, called with the bot's credentials.
 * Such an id is refused before any request; an ordinary id still goes out.
 */
const OPEN = "INSECURE_NO_AUTH";
let api: FakeApi;
let gw: TestGateway;
beforeAll(async () => {
  api = await startFakeApi((r) =>
    r.method === "GET"
      ? { json: { username: "svc", user_id: "@svc:x" } }
      : { json: { id: "1", event_id: "$1" } },
  );
  const route = (deliver: string) => ({
    secret: OPEN,
    prompt: "hi",
    deliver,
    deliver_only: true,
    deliver_extra: { chat_id: "{channel}" },
  });
  gw = await startTestGateway({
    config: webhookConfig(
      { discord: route("discord"), matrix: route("matrix") },
      { rate_limit: 1000 },
      {
        platforms: {
          discord: { enabled: true, token: "DISCORD-TOKEN", base_url: api.url },
          matrix: { enabled: true, token: "MATRIX-TOKEN", base_url: api.url },
        },
      },
    ),
  });
});
afterAll(async () => {
  await gw.stop();
  await api.close();
});

const posts = () => api.requests.filter((r) => r.method !== "GET").map((r) => r.path);

describe("ids from the payload never climb out of their path segment", () => {
  it.each(["..", "."])("discord: chat id %j is refused and nothing is sent", async (id) => {
    const before = posts().length;
    const res = await postJson(gw.url("/webhooks/discord"), { channel: id });
    expect(res).toMatchObject({ status: 502, body: { error: "Delivery failed" } });
    expect(posts().slice(before)).toEqual([]);
    expect(JSON.stringify(gw.logs())).toContain('an id in the request path is \\".\\" or \\"..\\"');
  });

  it("matrix: room id .. is refused and nothing is sent", async () => {
    const before = posts().length;
    const res = await postJson(gw.url("/webhooks/matrix"), { channel: ".." });
    expect(res).toMatchObject({ status: 502, body: { error: "Delivery failed" } });
    expect(posts().slice(before)).toEqual([]);
  });

  it.each([
    ["..555", "/api/v10/channels/..555/messages"],
    ["%2e%2e", "/api/v10/channels/%252e%252e/messages"],
  ])("an id such as %j is an ordinary (encoded) id and is delivered", async (id, path) => {
    const before = posts().length;
    const res = await postJson(gw.url("/webhooks/discord"), { channel: id });
    expect(res).toMatchObject({ status: 200, body: { status: "delivered", target: "discord" } });
    expect(posts().slice(before)).toEqual([path]);
  });
});
