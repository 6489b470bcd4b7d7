import { afterEach, describe, expect, it } from "vitest";
import { HTTP_SERVERS, startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson, rawHttp } from "../../helpers/http.js";
import { scrapedSample } from "../../helpers/metrics.js";

/**
 * docs/webhook.md, processing order: a route whose rate-limit quota is spent is answered 429 from the
 * request's head, its body never buffered (a flood of unfinished 1 MiB bodies to a spent route grew the
 * gateway by the sum of them, and got no answer until each body ended); 404, 405 and a 413 by
 * Content-Length, which the head decides too, keep their place before it.
 */

const OPEN = "INSECURE_NO_AUTH";
let gw: TestGateway;
afterEach(() => gw.stop());

const head = (lines: string) => `POST /webhooks/open HTTP/1.1\r\nHost: x\r\n${lines}\r\n`;

describe.each(HTTP_SERVERS)("a route whose quota is spent, on the %s server", (http) => {
  it("is answered 429 with Retry-After from the head alone, the body left unread and the connection closed", async () => {
    gw = await startTestGateway({
      http,
      config: webhookConfig({ open: { secret: OPEN } }, { rate_limit: 1, metrics: true }),
    });
    expect((await postJson(gw.url("/webhooks/open"), {})).status).toBe(202);
    // Bodies that never end: the answer can only come from the head.
    for (const framing of ["Content-Length: 1000\r\n", "Transfer-Encoding: chunked\r\n"]) {
      const body = framing.startsWith("Content") ? "x".repeat(10) : "a\r\n0123456789\r\n";
      const answer = await rawHttp(gw.gateway.port, [head(framing), body]);
      expect(answer.status, framing).toBe(429);
      expect(JSON.parse(answer.body), framing).toEqual({ error: "Rate limit exceeded" });
      expect(answer.head, framing).toMatch(/\r\nRetry-After: \d+\r\n/i);
      expect(answer.head, framing).toMatch(/\r\nConnection: close\r\n/i);
    }
    // Counted as any 429.
    expect(await scrapedSample(gw.base, 'svc_webhook_requests_total{route="open",status="429"}')).toBe(2);
  });

  it("keeps the answers the head decides before the rate limit: 404 unknown route, 405, 413 by Content-Length", async () => {
    gw = await startTestGateway({
      http,
      config: webhookConfig({ open: { secret: OPEN } }, { rate_limit: 1, max_body_bytes: 64 }),
    });
    expect((await postJson(gw.url("/webhooks/open"), {})).status).toBe(202);
    const port = gw.gateway.port;
    expect((await rawHttp(port, [head("Content-Length: 65\r\n"), "x"])).status).toBe(413);
    expect((await rawHttp(port, ["GET /webhooks/open HTTP/1.1\r\nHost: x\r\n\r\n"])).status).toBe(405);
    const unknown = await rawHttp(port, [
      "POST /webhooks/nope HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}",
    ]);
    expect(unknown.status).toBe(404);
    expect((await rawHttp(port, [head("Content-Length: 2\r\n"), "{}"])).status).toBe(429);
  });
});
