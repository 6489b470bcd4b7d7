import { afterEach, describe, expect, it } from "vitest";
import { type FixtureHttp, startStreamableHttp } from "../../fixtures/mcp/httpServers.js";
import { entry, text, useHubs } from "./harness.js";

const servers: FixtureHttp[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
const ctx = useHubs();

/**
 * Hosted MCP servers often take the API key in the url (`?api_key=${KEY}`, spec 2.3). Status messages
 * (svc mcp list, logs) quote the url as written, never the rendered secret.
 */
describe("a secret rendered into the url", () => {
  it("is used for the connection but not shown when the preflight refuses the endpoint", async () => {
    const s = await startStreamableHttp();
    servers.push(s);
    ctx.home.write(".env", "MCP_KEY=s3cr3t-key-value\n");
    const ok = ctx.hub(ctx.home, { good: entry({ url: `${s.url}?api_key=\${MCP_KEY}` }) });
    expect(text(await ok.call("good", "echo", { text: "k" }))).toBe("k");
    expect(s.requests.some((r) => r.includes("api_key=s3cr3t-key-value"))).toBe(true);

    const html = s.url.replace(/\/mcp$/, "/html");
    const h = ctx.hub(ctx.home, { page: entry({ url: `${html}?api_key=\${MCP_KEY}` }) });
    const status = await h.settled("page");
    expect(status.state).toBe("failed");
    expect(status.lastError).toContain("?api_key=${MCP_KEY} answered HEAD with content type");
    expect(status.lastError).not.toContain("s3cr3t");
  });
});
