import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { readStatusFile } from "../../../src/io/mcp/statusFile.js";
import { type EverythingHttp, everythingStdio, startEverything } from "../../fixtures/mcp/everything.js";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";

/** The gateway with server-everything over all three transports. */
describe("a gateway connected to server-everything over stdio, Streamable HTTP and SSE", () => {
  let http: EverythingHttp;
  let sse: EverythingHttp;
  let gw: TestGateway;

  beforeAll(async () => {
    [http, sse] = await Promise.all([startEverything("streamableHttp"), startEverything("sse")]);
    gw = await startTestGateway({
      config: {
        platforms: { webhook: { enabled: false } },
        mcp_servers: {
          local: everythingStdio(),
          remote: { url: http.url },
          legacy: { url: sse.url, transport: "sse", tools: { resources: true, prompts: true } },
          off: everythingStdio({ enabled: false }),
        },
      },
    });
  }, 20_000);

  afterAll(async () => {
    await gw?.stop();
    await Promise.all([http?.kill(), sse?.kill()]);
  });

  it("publishes each server connected with the tools it registered (what svc mcp list shows)", async () => {
    const servers = () =>
      (readStatusFile(join(gw.home.dir, "mcp-cache"))?.servers ?? []).map((s) => ({
        name: s.name,
        transport: s.transport,
        state: s.state,
        toolCount: s.toolCount,
        era: s.era,
      }));
    await vi.waitFor(
      () =>
        expect(servers()).toEqual([
          { name: "local", transport: "stdio", state: "connected", toolCount: 15, era: "legacy" },
          { name: "remote", transport: "http", state: "connected", toolCount: 15, era: "legacy" },
          { name: "legacy", transport: "sse", state: "connected", toolCount: 19, era: "legacy" },
          { name: "off", transport: "stdio", state: "skipped", toolCount: 0, era: undefined },
        ]),
      { timeout: 10_000, interval: 50 },
    );
    expect(gw.logs().map((l) => l.msg)).toEqual(
      expect.arrayContaining([
        "[mcp] local: connected",
        "[mcp] remote: connected",
        "[mcp] legacy: connected",
      ]),
    );
  });
});
