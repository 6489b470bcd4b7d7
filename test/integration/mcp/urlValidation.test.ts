import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { entry, useHubs } from "./harness.js";

const ctx = useHubs();

/** Spec 2.1 `url`: a remote MCP endpoint (Streamable HTTP or SSE) — an http or https URL. */
describe("mcp_servers.<name>.url", () => {
  it("a url that is not http(s) is a configuration error naming file, key and value", () => {
    for (const [url, why] of [
      [
        "ftp://files.example/mcp",
        /expected an http:\/\/ or https:\/\/ URL, got "ftp:\/\/files\.example\/mcp" \(ftp is not supported\)/,
      ],
      [
        "localhost:8080/mcp",
        /expected an http:\/\/ or https:\/\/ URL, got "localhost:8080\/mcp" \(no http:\/\/ or https:\/\/ at its start\) — write http:\/\/localhost:8080\/mcp \(https:\/\/ for TLS\)$/m,
      ],
      ["not a url", /expected an http:\/\/ or https:\/\/ URL, got "not a url"$/m],
      [
        "mcp.example.com/mcp",
        /got "mcp\.example\.com\/mcp" \(no http:\/\/ or https:\/\/ at its start\) — write http:\/\/mcp\.example\.com\/mcp \(https:\/\/ for TLS\)$/m,
      ],
    ] as const) {
      ctx.home.write("config.yaml", `mcp_servers:\n  remote:\n    url: ${JSON.stringify(url)}\n`);
      expect(() => loadConfig({ home: ctx.home.dir, env: {} }), url).toThrow(why);
      expect(() => loadConfig({ home: ctx.home.dir, env: {} }), url).toThrow(
        /config\.yaml: mcp_servers\.remote\.url: /,
      );
    }
  });

  it("a url built from ${VAR} is checked once rendered; the status quotes the url as written, not the secret", async () => {
    ctx.home.write(".env", "MCP_HOST=ftp://secret-host.example\n");
    const h = ctx.hub(ctx.home, { r: entry({ url: "${MCP_HOST}/mcp" }) });
    const status = await h.settled("r");
    expect(status.state).toBe("failed");
    expect(status.lastError).toBe(
      'mcp_servers.r.url: expected an http:// or https:// URL, got "${MCP_HOST}/mcp" (ftp is not supported)',
    );
  });
});
