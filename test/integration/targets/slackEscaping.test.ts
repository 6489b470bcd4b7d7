import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * Spec 5 rule 6: payload text is untrusted. Slack reads `<!channel>`, `<!here>`, `<@U…>` and `<url|text>`
 * in a message's text as mentions and links; Slack's "Formatting text" guide says to escape `&`, `<` and
 * `>` as `&amp;`, `&lt;`, `&gt;` in text that is not meant as markup, and Slack shows them as typed.
 */
const OPEN = "INSECURE_NO_AUTH";
let slack: FakeApi;
let gw: TestGateway;
beforeAll(async () => {
  slack = await startFakeApi(() => ({ json: { ok: true, user: "svc", team: "acme" } }));
  gw = await startTestGateway({
    config: webhookConfig(
      {
        issue: {
          secret: OPEN,
          prompt: "New issue: {issue.title}",
          deliver: "slack",
          deliver_only: true,
          deliver_extra: { chat_id: "C0123" },
        },
      },
      { rate_limit: 1000 },
      { platforms: { slack: { enabled: true, token: "xoxb-T", base_url: slack.url } } },
    ),
  });
});
afterAll(async () => {
  await gw.stop();
  await slack.close();
});

describe("slack: control characters in payload text are escaped", () => {
  it("escapes &, < and > so <!channel> and <url|text> from a payload are neither mentions nor links", async () => {
    const title = "<!channel> win <https://evil.example|prizes> & a<b>c";
    const res = await postJson(gw.url("/webhooks/issue"), { issue: { title } });
    expect(res).toMatchObject({ status: 200, body: { status: "delivered", target: "slack" } });
    const sent = slack.requests.filter((r) => r.path === "/api/chat.postMessage");
    expect(sent).toHaveLength(1);
    expect(sent[0]?.json).toEqual({
      channel: "C0123",
      text: "New issue: &lt;!channel&gt; win &lt;https://evil.example|prizes&gt; &amp; a&lt;b&gt;c",
    });
  });

  it("the 40,000-character limit counts the escaped text Slack receives: each part's text stays within it", async () => {
    slack.requests.length = 0;
    const title = "<a> & ".repeat(5000); // 30,000 characters, 95,000 once escaped
    const res = await postJson(gw.url("/webhooks/issue"), { issue: { title } });
    expect(res.status).toBe(200);
    const texts = slack.requests
      .filter((r) => r.path === "/api/chat.postMessage")
      .map((r) => (r.json as { text: string }).text);
    expect(texts.length).toBe(3);
    for (const text of texts) expect(text.length).toBeLessThanOrEqual(40_000);
    const unescapeSlack = (t: string) =>
      t.replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&amp;", "&");
    expect(texts.map(unescapeSlack).join("")).toBe(`New issue: ${title}`);
  });
});
