import { afterEach, describe, expect, it } from "vitest";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * A Slack thread_ts copied unquoted into config.yaml reads as a YAML float: 1700000000.000100 would
 * become 1700000000.0001, another (missing) thread. deliver_extra keeps the text written.
 */

let gw: TestGateway | undefined;
let slack: FakeApi | undefined;
afterEach(async () => {
  await gw?.stop();
  await slack?.close();
  gw = undefined;
  slack = undefined;
});

describe("deliver_extra numbers written unquoted in config.yaml", () => {
  it("a Slack thread_ts of 1700000000.000100 reaches chat.postMessage as written", async () => {
    slack = await startFakeApi(() => ({ json: { ok: true } }));
    gw = await startTestGateway({
      config: `
platforms:
  slack:
    enabled: true
    token: xoxb-t
    base_url: ${slack.url}
  webhook:
    enabled: true
    host: 127.0.0.1
    routes:
      thread:
        secret: INSECURE_NO_AUTH
        deliver: slack
        deliver_only: true
        prompt: "in the thread"
        deliver_extra:
          chat_id: C0123
          thread_ts: 1700000000.000100
`,
    });
    expect(await postJson(gw.url("/webhooks/thread"), {})).toMatchObject({ status: 200 });
    const post = slack.requests.find((r) => r.path === "/api/chat.postMessage");
    expect(post?.json).toMatchObject({
      channel: "C0123",
      thread_ts: "1700000000.000100",
      text: "in the thread",
    });
  });
});
