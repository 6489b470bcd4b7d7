import { sign } from "@octokit/webhooks-methods";
import { afterEach, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson, rawHttp } from "../../helpers/http.js";

const OPEN = "INSECURE_NO_AUTH";

/**
 * `platforms.webhook` settings as a sender meets them (spec 2.1): the defaults of `rate_limit` and
 * `max_body_bytes` when the file leaves them out, and a key written under `extra` winning over the same key
 * written directly. The fake clock moves only where a test says so, so the requests before fall in one
 * rate-limit window.
 */
describe("adapter settings over HTTP", () => {
  let gw: TestGateway | undefined;
  afterEach(async () => {
    await gw?.stop();
    gw = undefined;
  });

  const signed = async (route: string, secret: string) => {
    const body = JSON.stringify({ action: "opened" });
    return postJson(gw?.url(`/webhooks/${route}`) ?? "", body, {
      "X-Hub-Signature-256": await sign(secret, body),
    });
  };

  it("left out, rate_limit is 30 requests a minute per route (a new minute opens afresh) and max_body_bytes is 1048576 (one declared byte more is 413 before the body is sent)", async () => {
    gw = await startTestGateway({
      config: webhookConfig({ busy: { secret: OPEN }, other: { secret: OPEN }, big: { secret: OPEN } }),
    });
    const live = gw;
    for (let i = 0; i < 30; i++) expect((await postJson(live.url("/webhooks/busy"), {})).status).toBe(202);
    expect(await postJson(live.url("/webhooks/busy"), {})).toMatchObject({
      status: 429,
      body: { error: "Rate limit exceeded" },
    });
    expect((await postJson(live.url("/webhooks/other"), {})).status).toBe(202);
    live.clock.advance(60_000);
    expect((await postJson(live.url("/webhooks/busy"), {})).status, "the next window").toBe(202);

    const exactly = JSON.stringify({ pad: "x".repeat(1_048_576 - 10) });
    expect(Buffer.byteLength(exactly)).toBe(1_048_576);
    expect((await postJson(live.url("/webhooks/big"), exactly)).status).toBe(202);
    const over = await rawHttp(live.gateway.port, [
      "POST /webhooks/big HTTP/1.1\r\nHost: x\r\nContent-Length: 1048577\r\n\r\n",
    ]);
    expect(over.status).toBe(413);
    expect(JSON.parse(over.body)).toEqual({ error: "Payload too large" });
  });

  it("a key written under extra wins over the same key written directly: rate_limit, secret, a route", async () => {
    gw = await startTestGateway({
      config: webhookConfig(
        { limited: { secret: OPEN }, signed: {}, both: { secret: OPEN, prompt: "direct" } },
        {
          rate_limit: 5,
          secret: "direct-global",
          extra: { rate_limit: 2, secret: "extra-global", routes: { both: { prompt: "extra" } } },
        },
      ),
    });
    const live = gw;
    expect((await postJson(live.url("/webhooks/limited"), {})).status).toBe(202);
    expect((await postJson(live.url("/webhooks/limited"), {})).status).toBe(202);
    expect((await postJson(live.url("/webhooks/limited"), {})).status).toBe(429);

    expect((await signed("signed", "extra-global")).status).toBe(202);
    expect(await signed("signed", "direct-global")).toMatchObject({
      status: 401,
      body: { error: "Invalid signature" },
    });

    // The route under extra replaces the direct one whole: its INSECURE_NO_AUTH is not kept.
    expect((await postJson(live.url("/webhooks/both"), {})).status).toBe(401);
    expect((await signed("both", "extra-global")).status).toBe(202);
  });
});
