import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeApi } from "../../fakes/httpFake.js";
import { startFakeTelegram } from "../../fakes/telegram.js";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * A payload filter given by an alias a value written where svc reads ids as text (`deliver_extra`,
 * `home_channel`) compares the number YAML read, whichever route comes first: the id stays text where it is
 * written, the filter's copy a number, as a payload's `"id": 42` is.
 */
const OPEN = "INSECURE_NO_AUTH";
const IGNORED = { status: 200, body: { status: "ignored", reason: "filter" } };

describe("a payload filter given an anchor written as an id, over HTTP", () => {
  let tg: FakeApi;
  let gw: TestGateway;
  beforeAll(async () => {
    tg = await startFakeTelegram();
    gw = await startTestGateway({
      config: `platforms:
  telegram: {enabled: true, token: "1:abc", base_url: ${JSON.stringify(tg.url)}, home_channel: &ops -1001234567890}
  webhook:
    enabled: true
    host: 127.0.0.1
    rate_limit: 1000
    routes:
      chat: {secret: ${OPEN}, prompt: x, deliver: telegram, deliver_extra: {chat_id: &chat 42}}
      by_chat: {secret: ${OPEN}, filters: [{field: chat.id, equals: *chat}]}
      by_ops: {secret: ${OPEN}, filters: [{field: chat.id, in: [*ops]}]}
`,
    });
  });
  afterAll(async () => {
    await gw.stop();
    await tg.close();
  });

  const post = async (route: string, body: unknown) => {
    const res = await postJson(gw.url(`/webhooks/${route}`), body);
    return { status: res.status, body: res.status === 202 ? { status: res.body.status } : res.body };
  };
  const ACCEPTED = { status: 202, body: { status: "accepted" } };

  it("deliver_extra's chat_id: &chat 42 given to equals matches the payload's number 42, not the text", async () => {
    expect(await post("by_chat", { chat: { id: 42 } })).toEqual(ACCEPTED);
    expect(await post("by_chat", { chat: { id: "42" } })).toEqual(IGNORED);
  });

  it("home_channel: &ops -1001234567890 given to in matches the payload's number", async () => {
    expect(await post("by_ops", { chat: { id: -1001234567890 } })).toEqual(ACCEPTED);
  });
});
