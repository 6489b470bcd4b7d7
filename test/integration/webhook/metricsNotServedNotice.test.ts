import { afterEach, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

const said = (gateway: TestGateway): string[] =>
  gateway
    .logs()
    .map((line) => line.msg)
    .filter((msg) => msg.includes("/metrics"));

/**
 * With `metrics` unset, /metrics is served on a loopback bind only. On any other bind — also the one a
 * config.yaml without `host` gets — `curl http://127.0.0.1:8644/metrics` was answered 404 Not found, with
 * nothing anywhere saying why: the start now says so once, with the key that serves it.
 */
describe("the start says when /metrics is not served because of the bind", () => {
  it("metrics unset on a bind that is not loopback: an INFO line naming the key", async () => {
    gw = await startTestGateway({ config: webhookConfig({ r: { secret: "s" } }, { host: "0.0.0.0" }) });
    expect((await fetch(`http://127.0.0.1:${gw.gateway.port}/metrics`)).status).toBe(404);
    expect(said(gw)).toEqual([
      "[webhook] GET /metrics is not served: platforms.webhook.metrics is unset, which serves it on a loopback bind only, and the gateway listens on 0.0.0.0 — to scrape it, set platforms.webhook.metrics: true and let only the scraper's network reach /metrics (restart)",
    ]);
  });

  it("nothing said on a loopback bind, nor when metrics is written false or true", async () => {
    gw = await startTestGateway({ config: webhookConfig({ r: { secret: "s" } }) });
    expect(said(gw)).toEqual([]);
    await gw.stop();
    gw = await startTestGateway({
      config: webhookConfig({ r: { secret: "s" } }, { host: "0.0.0.0", metrics: false }),
    });
    expect(said(gw)).toEqual([]);
    await gw.stop();
    gw = await startTestGateway({
      config: webhookConfig({ r: { secret: "s" } }, { host: "0.0.0.0", metrics: true }),
    });
    expect(said(gw)).toEqual([]);
  });
});
