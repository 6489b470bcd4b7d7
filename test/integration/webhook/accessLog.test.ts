import { sign as signGithub } from "@octokit/webhooks-methods";
import { describe, expect, it } from "vitest";
import { gatewayPerTest, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

const SECRET = "access-secret";
const gw = gatewayPerTest();

describe("platforms.webhook.access_log", () => {
  for (const http of ["uws", "node"] as const) {
    it(`${http}: one INFO line per request with route, status, delivery ID and latency`, async () => {
      const live = await gw.start({
        http,
        config: webhookConfig({ pr: { secret: SECRET } }, { access_log: true }),
      });
      const body = '{"number":7}';
      const signed = await postJson(live.url("/webhooks/pr"), body, {
        "X-GitHub-Event": "pull_request",
        "X-GitHub-Delivery": "d-access-1",
        "X-Hub-Signature-256": await signGithub(SECRET, body),
      });
      expect(signed.status).toBe(202);
      const unsigned = await postJson(live.url("/webhooks/pr"), body, { "X-GitHub-Delivery": "d-bad" });
      expect(unsigned.status).toBe(401);
      const unknown = await postJson(live.url("/webhooks/nope"), body);
      expect(unknown.status).toBe(404);
      // The metrics endpoint is a request like any other (its scrapes and a refused method).
      expect((await fetch(live.url("/metrics"))).status).toBe(200);
      expect((await postJson(live.url("/metrics"), "{}")).status).toBe(405);
      const lines = live
        .logs()
        .filter((l) => l.msg.startsWith("[access]"))
        .map((l) => l.msg.replace(/ \d+ms$/, " <ms>"));
      expect(lines).toEqual([
        "[access] POST pr 202 d-access-1 <ms>",
        "[access] POST pr 401 d-bad <ms>",
        "[access] POST nope 404 - <ms>",
        "[access] GET /metrics 200 - <ms>",
        "[access] POST /metrics 405 - <ms>",
      ]);
      const first = live.logs().find((l) => l.msg.startsWith("[access]"));
      expect(first).toMatchObject({ level: 30, route: "pr", status: 202, delivery_id: "d-access-1" });
      expect(typeof first?.ms).toBe("number");
    });
  }

  it("off by default: no access line, the 401 stays at DEBUG", async () => {
    const live = await gw.start({ config: webhookConfig({ pr: { secret: SECRET } }) });
    expect((await postJson(live.url("/webhooks/pr"), "{}")).status).toBe(401);
    expect(live.logs().filter((l) => l.msg.startsWith("[access]"))).toEqual([]);
  });

  it("a header with control characters cannot break the line", async () => {
    const live = await gw.start({ config: webhookConfig({ pr: { secret: SECRET } }, { access_log: true }) });
    await postJson(live.url("/webhooks/pr"), "{}", { "X-Request-ID": "a\u00e9b" });
    const line = live.logs().find((l) => l.msg.startsWith("[access]"));
    expect(line?.msg).toMatch(/^\[access\] POST pr 401 [\x20-\x7e]+ \d+ms$/);
  });
});
