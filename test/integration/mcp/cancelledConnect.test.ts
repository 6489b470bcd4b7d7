import { createServer, type IncomingMessage } from "node:http";
import { type AddressInfo, createServer as createTcpServer, type Socket } from "node:net";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { describe, expect, it, vi } from "vitest";
import { buildServer } from "../../fixtures/mcp/server.mjs";
import { entry, ownHubs } from "./harness.js";

async function body(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

// Its tests run at once, each with a hub and a server of its own.
describe("a connect given up", () => {
  it.concurrent("by a stop during the preflight opens no session afterwards: the preflight ends with it and no initialize is sent", async ({
    onTestFinished,
  }) => {
    // A real SDK server behind a front that never answers HEAD or GET (the preflight's probes). Each probe
    // has a share of connect_timeout and then gives no verdict, so connect_timeout itself never runs out in
    // the preflight: a stop (or a reload) is what gives the connect up there.
    const heads: number[] = [];
    const posts: number[] = [];
    const server = createServer(async (req, res) => {
      if (req.method === "HEAD") heads.push(1);
      if (req.method !== "POST") return; // hangs
      posts.push(1);
      const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true });
      await buildServer("legacy").connect(transport);
      await transport.handleRequest(req, res, await body(req));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const hub = ownHubs(onTestFinished).hub({
        h: entry({ url: `http://127.0.0.1:${port}/mcp`, connect_timeout: 3 }),
      });
      await vi.waitFor(() => expect(heads).toHaveLength(1), { timeout: 5000, interval: 10 });
      await hub.stop();
      // The probes would have ended by 2 s (each a third of the budget) and the abandoned connect would then
      // have initialized a session nobody closes.
      await new Promise((resolve) => setTimeout(resolve, 2500));
      expect(posts).toEqual([]);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it.concurrent("by connect_timeout leaves no TLS handshake behind: an https url whose server takes the connection and never answers it", async ({
    onTestFinished,
  }) => {
    // A hung TLS server (or a port whose service waits for the client to speak): undici gives up such a
    // handshake only after its own 10 s, which held svc mcp test, list and call open that long past the
    // connect_timeout they had reported.
    const open = new Set<Socket>();
    const server = createTcpServer((socket) => {
      open.add(socket);
      socket.on("close", () => open.delete(socket));
      socket.resume(); // reads (and drops) the handshake, so the client's close is seen
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const hub = ownHubs(onTestFinished).hub({
        h: entry({ url: `https://127.0.0.1:${port}/mcp`, connect_timeout: 1 }),
      });
      expect((await hub.settled("h")).state).toBe("failed");
      await hub.stop();
      await vi.waitFor(() => expect(open.size).toBe(0), { timeout: 3000, interval: 50 });
    } finally {
      for (const socket of open) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
