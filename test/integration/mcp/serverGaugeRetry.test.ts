import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { gatewayPerTest, webhookConfig } from "../../helpers/gateway.js";
import { sample } from "../../helpers/metrics.js";

const gw = gatewayPerTest();
/** An MCP URL that takes each request and never answers it (a server hung, or a firewall dropping packets). */
let silent: FakeApi;
beforeAll(async () => {
  silent = await startFakeApi(() => new Promise(() => undefined));
});
afterAll(() => silent.close());

describe("svc_mcp_servers while a server that never answers is retried", { timeout: 30_000 }, () => {
  it("counts it failed during the retry's connect too, so an alert on failed servers held for minutes can fire", async () => {
    const live = await gw.start({
      config: webhookConfig(
        {},
        {},
        { mcp_servers: { hung: { url: `${silent.url}/mcp`, transport: "http", connect_timeout: 5 } } },
      ),
    });
    const scrape = async () => (await fetch(live.url("/metrics"))).text();
    // The first connect, before anything failed, is connecting.
    expect(sample(await scrape(), 'svc_mcp_servers{state="connecting"}')).toBe(1);
    // It fails at connect_timeout; the retry after the backoff sends a request again, and waits its 5 s.
    await vi.waitFor(async () => expect(sample(await scrape(), 'svc_mcp_servers{state="failed"}')).toBe(1), {
      timeout: 15_000,
      interval: 100,
    });
    const before = silent.requests.length;
    await vi.waitFor(() => expect(silent.requests.length).toBeGreaterThan(before), {
      timeout: 15_000,
      interval: 20,
    });
    const text = await scrape();
    expect(sample(text, 'svc_mcp_servers{state="failed"}')).toBe(1);
    expect(sample(text, 'svc_mcp_servers{state="connecting"}')).toBe(0);
  });
});
