import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HTTP_SERVERS, startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { rawHttp } from "../../helpers/http.js";

/**
 * A route secret with a character outside printable ASCII: HMAC schemes (the secret is only the key)
 * and Basic credentials (base64 on the wire) verify; a header carrying the secret itself must be
 * printable ASCII, so token and Bearer senders are answered 401, and the gateway says so at startup.
 */

const SECRET = "sekérit";

describe.each(HTTP_SERVERS)("a non-ASCII route secret on the %s server", (http) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      http,
      config: webhookConfig({ utf: { secret: SECRET } }, { rate_limit: 1000 }),
    });
  });
  afterAll(() => gw.stop());

  const send = async (headerLine: Buffer, body = "{}") => {
    const answer = await rawHttp(gw.gateway.port, [
      Buffer.concat([
        Buffer.from(`POST /webhooks/utf HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n`),
        headerLine,
        Buffer.from(`\r\n\r\n${body}`),
      ]),
    ]);
    return answer.status;
  };
  const utf8 = (text: string) => Buffer.from(text, "utf8");

  it("verifies HMAC signatures and Basic credentials, answers token and Bearer headers 401", async () => {
    const signature = createHmac("sha256", SECRET).update("{}").digest("hex");
    const basic = Buffer.from(`any:${SECRET}`, "utf8").toString("base64");
    expect([
      await send(utf8(`X-Hub-Signature-256: sha256=${signature}`)),
      await send(utf8(`Authorization: Basic ${basic}`)),
      await send(utf8(`X-Gitlab-Token: ${SECRET}`)),
      await send(utf8(`Authorization: Bearer ${SECRET}`)),
    ]).toEqual([202, 202, 401, 401]);
  });

  it("names the route's secret key at startup, without the secret", () => {
    const warnings = gw
      .logs()
      .filter((line) => line.level === 40 && line.msg.includes("outside printable ASCII"))
      .map((line) => line.msg);
    expect(warnings).toEqual([
      `[webhook] ${gw.home.dir}/config.yaml: platforms.webhook.routes.utf.secret has a character outside printable ASCII, so a sender that sends the secret itself (X-Gitlab-Token, Authorization: Bearer) is always answered 401; HMAC signatures and Basic credentials still verify — use a printable ASCII secret without edge spaces (svc gateway setup generates one) if this route takes tokens`,
    ]);
    expect(JSON.stringify(gw.logs())).not.toContain(SECRET);
  });
});
