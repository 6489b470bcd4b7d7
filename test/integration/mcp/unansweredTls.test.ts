import { type AddressInfo, createServer, type Socket } from "node:net";
import { describe, expect, it, vi } from "vitest";
import { SimulatedClock } from "xstate";
import { stringify } from "yaml";
import { loadConfig } from "../../../src/config/load.js";
import type { McpServerEntry } from "../../../src/config/sections/mcp.js";
import { tempHome } from "../../helpers/home.js";
import { svc } from "../cli/svc.js";
import { entry, ownHubs } from "./harness.js";

/**
 * An https url whose server takes the TCP connection and never answers the TLS handshake (a hung TLS
 * server, a proxy or middlebox that holds the connection): no request ever reached it, so the connect
 * given up names the handshake, not the transport (docs/mcp.md, A process that exits, or never answers the
 * handshake), and leaves no connection behind it — undici would hold one being made until its own connect
 * timeout (10 s). Real sockets on 127.0.0.1.
 */

const stalled = (port: number) =>
  `the TLS handshake with 127.0.0.1:${port} did not complete (a server or proxy that takes the TCP connection and never answers TLS): check that the url's host and port serve HTTPS, and any proxy or firewall between svc and the server`;

interface Hung {
  readonly port: number;
  /** The connections it holds now. */
  readonly open: Set<Socket>;
}

/**
 * Takes each connection and answers nothing; reads (and drops) the client's hello, so its close is seen.
 * Closed when the test ends (`finished`: its `onTestFinished`).
 */
async function hungTls(finished: (fn: () => Promise<void>) => void): Promise<Hung> {
  const open = new Set<Socket>();
  const server = createServer((socket) => {
    open.add(socket);
    socket.on("close", () => open.delete(socket));
    socket.on("error", () => undefined);
    socket.resume();
  });
  finished(async () => {
    // (Left open only by a test that failed.)
    for (const socket of open) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { port: (server.address() as AddressInfo).port, open };
}

const transports: [string, { transport?: string }][] = [
  ["Streamable HTTP", {}],
  ["SSE", { transport: "sse" }],
];

describe.each(transports)(
  "a url server that takes the connection and never answers TLS, %s",
  (_, transport) => {
    it.concurrent("the connect given up names the TLS handshake, and leaves no connection open", async ({
      onTestFinished,
    }) => {
      const hung = await hungTls(onTestFinished);
      const clock = new SimulatedClock();
      // A connect_timeout longer than undici's own connect timeout (10 s) for each connection: the connect
      // is given up on the simulated clock while the handshake still waits.
      const hub = ownHubs(onTestFinished).hub(
        { h: entry({ url: `https://127.0.0.1:${hung.port}/mcp`, connect_timeout: 60, ...transport }) },
        { clock },
      );
      // The server took the connection: the handshake waits.
      await vi.waitFor(() => expect(hung.open.size).toBeGreaterThan(0), { timeout: 10_000, interval: 20 });
      await vi.waitFor(() => expect(hub.connectSoFar("h", "")).toContain("TLS handshake"), {
        timeout: 5_000,
        interval: 20,
      });
      clock.increment(60_000);
      expect(hub.status()[0]).toMatchObject({
        state: "failed",
        lastError: `connect timed out after 60 s (connect_timeout) — ${stalled(hung.port)}`,
      });
      await hub.stop();
      // Well before undici's 10 s: the connect that gave up ended the connections it was making.
      await vi.waitFor(() => expect(hung.open.size).toBe(0), { timeout: 5_000, interval: 20 });
    }, 30_000);

    it.concurrent("svc mcp test says so", async ({ onTestFinished }) => {
      const hung = await hungTls(onTestFinished);
      const home = tempHome();
      try {
        // 3 s: enough for the connect to reach its first connection on a loaded machine.
        home.write(
          "config.yaml",
          stringify({
            mcp_servers: {
              h: { url: `https://127.0.0.1:${hung.port}/mcp`, connect_timeout: 3, ...transport },
            },
          }),
        );
        const res = await svc(home, ["mcp", "test", "h"]);
        expect(res.code).toBe(1);
        expect(res.stderr).toContain(
          `mcp_servers.h: connect timed out after 3 s (connect_timeout) — ${stalled(hung.port)}\n`,
        );
      } finally {
        home.cleanup();
      }
    }, 30_000);
  },
);

/**
 * A url a `${VAR}` gave names its host as config.yaml writes it in every failure (docs/mcp.md): the stalled
 * handshake's `host:port` too, which the connect given up adds after the system's words.
 */
describe(`a url a $\{VAR} gave, whose server never answers TLS`, () => {
  it.concurrent("the connect given up names the host as the host of the file's text", async ({
    onTestFinished,
  }) => {
    const hung = await hungTls(onTestFinished);
    const clock = new SimulatedClock();
    const hubs = ownHubs(onTestFinished);
    hubs.home.write(
      "config.yaml",
      `mcp_servers:\n  h:\n    url: "https://$\{MCP_HOST}:${hung.port}/mcp"\n    connect_timeout: 60\n`,
    );
    hubs.home.write(".env", "MCP_HOST=127.0.0.1\n");
    const { config } = loadConfig({ home: hubs.home.dir, env: {} });
    const hub = hubs.hub({ h: config.mcp_servers.h as McpServerEntry }, { clock });
    await vi.waitFor(() => expect(hung.open.size).toBeGreaterThan(0), { timeout: 10_000, interval: 20 });
    await vi.waitFor(() => expect(hub.connectSoFar("h", "")).toContain("TLS handshake"), {
      timeout: 5_000,
      interval: 20,
    });
    clock.increment(60_000);
    const host = `<the host of "https://$\{MCP_HOST}:${hung.port}/mcp" (the value it gives is not shown)>`;
    const { lastError } = hub.status()[0] as { lastError?: string };
    expect(lastError).toContain(`— the TLS handshake with ${host}:${hung.port} did not complete (`);
    expect(lastError).not.toContain("127.0.0.1");
    await hub.stop();
  }, 30_000);
});
