import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * A global secret written `$GLOBAL_SEC` (a shell's variable, which svc does not replace) while every
 * config.yaml route has a secret of its own: the subscriptions without one fall back to it, so its literal
 * text is their HMAC key. The start names it as it names one a route uses.
 */

const GLOBAL = "$GLOBAL_SEC";

describe("a global secret written $NAME that only subscriptions fall back to", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      http: "node",
      config: webhookConfig({ gh: { secret: "route-own-secret-123" } }, { secret: GLOBAL }),
      files: { "webhook_subscriptions.json": JSON.stringify({ sub: { prompt: "p" } }) },
    });
  });
  afterAll(() => gw.stop());

  it("is named at start, for the subscriptions, never quoting the value", () => {
    const warnings = gw
      .logs()
      .filter((line) => line.level === 40 && line.msg.includes("a $ followed by a name"))
      .map((line) => line.msg);
    expect(warnings).toEqual([
      `[webhook] ${gw.home.dir}/config.yaml: platforms.webhook.secret (the global secret or WEBHOOK_SECRET, which overrides it; every subscription without a secret of its own uses it) is a $ followed by a name, as a shell or docker compose writes a variable, but svc replaces only $\{NAME} (with braces): the text itself is the secret, so every signature and token from a sender keyed with the variable's value is answered 401 — write it as $\{NAME}, in quotes (secret: "$\{NAME}")`,
    ]);
    expect(warnings.join("\n")).not.toContain("GLOBAL_SEC");
  });

  it("as the subscription's key it is the literal text (what the warning is about)", async () => {
    const body = JSON.stringify({ a: 1 });
    const signed = (key: string) => ({
      "X-Hub-Signature-256": `sha256=${createHmac("sha256", key).update(body).digest("hex")}`,
      "X-GitHub-Delivery": `d-${key.length}`,
    });
    expect((await postJson(gw.url("/webhooks/sub"), body, signed("the-value-meant"))).status).toBe(401);
    expect((await postJson(gw.url("/webhooks/sub"), body, signed(GLOBAL))).status).toBe(202);
  });
});
