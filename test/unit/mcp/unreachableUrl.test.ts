import { describe, expect, it } from "vitest";
import { mcpServerSchema } from "../../../src/config/sections/mcp.js";
import { connectServer } from "../../../src/io/mcp/connect.js";
import { unreachableUrlHint } from "../../../src/io/mcp/unreachableUrl.js";
import { closedPort } from "../../helpers/closedPort.js";

/**
 * A remote server's url that nothing answers at (the server not started, a typo in the host) failed with
 * fetch's words alone, `fetch failed: connect ECONNREFUSED 127.0.0.1:8080`, in svc mcp list, svc mcp test
 * and the gateway's status: now they say what to check.
 */
describe("a remote server's url nothing answers at", () => {
  const connect = (raw: Record<string, unknown>) =>
    connectServer("local", mcpServerSchema.parse({ connect_timeout: 5, ...raw }), {
      scope: () => ({ secrets: {}, env: {} }),
      interactive: false,
    });

  it("a refused connection names the port and host, with and without the preflight, and over SSE", async () => {
    const port = await closedPort();
    const hint = ` — nothing listens on port ${port} of 127.0.0.1: start the server, or check mcp_servers.local.url`;
    for (const raw of [
      { url: `http://127.0.0.1:${port}/mcp` },
      { url: `http://127.0.0.1:${port}/mcp`, skip_preflight: true },
      { url: `http://127.0.0.1:${port}/sse`, transport: "sse" },
    ])
      await expect(connect(raw)).rejects.toThrow(
        new RegExp(
          `^mcp_servers\\.local: fetch failed: connect ECONNREFUSED 127\\.0\\.0\\.1:${port}${hint.replace(/\./g, "\\.")}$`,
        ),
      );
  });

  it("protocol: stateless: a host name DNS does not know gets its hint, though svc's words quote it in parentheses", async () => {
    // The host was read with the `)` after it (`svc-test.invalid)`), which is no url's host: no hint.
    await expect(
      connect({ url: "http://svc-test.invalid/mcp", protocol: "stateless", skip_preflight: true }),
    ).rejects.toThrow(
      "mcp_servers.local: server/discover failed (fetch failed: getaddrinfo ENOTFOUND svc-test.invalid) and the legacy initialize retry failed (fetch failed: getaddrinfo ENOTFOUND svc-test.invalid) — the host name svc-test.invalid is not known (DNS): check the host in mcp_servers.local.url",
    );
  });

  it("a host name DNS does not know is named, with the port of the url's scheme when it writes none", () => {
    expect(
      unreachableUrlHint(
        "docs",
        "fetch failed: getaddrinfo ENOTFOUND mcp.example.invalid",
        "https://mcp.example.invalid/mcp",
      ),
    ).toBe(" — the host name mcp.example.invalid is not known (DNS): check the host in mcp_servers.docs.url");
    expect(
      unreachableUrlHint(
        "docs",
        "fetch failed: connect ECONNREFUSED 10.0.0.5:443",
        "https://mcp.corp.example/mcp",
      ),
    ).toBe(
      " — nothing listens on port 443 of mcp.corp.example: start the server, or check mcp_servers.docs.url",
    );
  });

  it("no hint when the address refused or not known is not the url's (a redirect it followed, an OAuth server)", () => {
    const url = "https://mcp.example.com/mcp";
    expect(unreachableUrlHint("x", "fetch failed: connect ECONNREFUSED 10.0.0.7:8080", url)).toBe("");
    expect(unreachableUrlHint("x", "fetch failed: getaddrinfo ENOTFOUND auth.internal", url)).toBe("");
    expect(unreachableUrlHint("x", "fetch failed: getaddrinfo ENOTFOUND MCP.example.com", url)).toContain(
      "the host name mcp.example.com is not known",
    );
  });

  it("no hint for other failures, nor for a proxy that could not be reached (its own message says so)", () => {
    expect(unreachableUrlHint("x", "fetch failed: bad port", "http://127.0.0.1:6000/mcp")).toBe("");
    expect(
      unreachableUrlHint(
        "x",
        "the proxy http://proxy.corp:3128 (set by HTTPS_PROXY) could not be reached: ECONNREFUSED",
        "https://mcp.example/mcp",
      ),
    ).toBe("");
  });
});
