import { describe, expect, it } from "vitest";
import { mcpServerSchema } from "../../../src/config/sections/mcp.js";
import { blockedPortHint } from "../../../src/io/mcp/blockedPort.js";
import { connectServer } from "../../../src/io/mcp/connect.js";

const HINT =
  "the port of mcp_servers.x11.url is one HTTP clients refuse (the Fetch standard's blocked ports, such as 6000, 6665-6669 and 10080), so svc never connects to it: serve the server on another port, or put a proxy in front";

/**
 * fetch refuses the Fetch standard's blocked ports before connecting: a server's url on one of them
 * (6000, 6665-6669, 10080, ...) failed with a bare `fetch failed: bad port` in svc mcp list, svc mcp test
 * and the gateway's status, retried forever, though no reconnect can change it. Nothing listens on
 * these ports here: fetch refuses them without opening a socket.
 */
describe("a remote server's url on a port fetch refuses", () => {
  const connect = (raw: Record<string, unknown>) =>
    connectServer("x11", mcpServerSchema.parse({ connect_timeout: 5, ...raw }), {
      scope: () => ({ secrets: {}, env: {} }),
      interactive: false,
    });

  it("Streamable HTTP, with and without the preflight: the connect error names the port as the cause and what to do", async () => {
    await expect(connect({ url: "http://127.0.0.1:6000/mcp" })).rejects.toThrow(
      `mcp_servers.x11: fetch failed: bad port — ${HINT}`,
    );
    await expect(connect({ url: "http://127.0.0.1:6666/mcp", skip_preflight: true })).rejects.toThrow(
      `mcp_servers.x11: fetch failed: bad port — ${HINT}`,
    );
  });

  it("SSE, whose stream says it as SSE error: TypeError: fetch failed: bad port", async () => {
    await expect(connect({ url: "http://127.0.0.1:10080/sse", transport: "sse" })).rejects.toThrow(
      `mcp_servers.x11: fetch failed: bad port — ${HINT}`,
    );
  });

  it("no hint for other fetch failures", () => {
    expect(blockedPortHint("x11", "fetch failed: connect ECONNREFUSED 127.0.0.1:8080")).toBe("");
    expect(blockedPortHint("x11", "fetch failed: getaddrinfo ENOTFOUND mcp.example")).toBe("");
  });
});
