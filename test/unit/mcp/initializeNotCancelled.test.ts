import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { InitializeRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it, vi } from "vitest";
import { openSession } from "../../../src/io/mcp/session.js";

/**
 * MCP: "The initialize request MUST NOT be cancelled by clients." The SDK's client cancels any request
 * whose own timer runs out, initialize too; that timer is the handshake's (`connect_timeout`), and it can
 * run out before svc gives the connect up (an interactive OAuth connect has login time added to its budget).
 */
describe("the SDK's own timeout of initialize", () => {
  it("fails the handshake without sending notifications/cancelled for initialize", async () => {
    const seen: string[] = [];
    const [client, serverSide] = InMemoryTransport.createLinkedPair();
    // An SDK server whose initialize handler never answers (a server stuck in its start-up).
    const server = new Server({ name: "stuck", version: "1" }, { capabilities: {} });
    server.setRequestHandler(InitializeRequestSchema, () => new Promise<never>(() => undefined));
    await server.connect(serverSide);
    const handle = serverSide.onmessage;
    serverSide.onmessage = (message, extra) => {
      if ("method" in message) seen.push(message.method);
      handle?.(message, extra);
    };
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const opened = openSession({
        name: "stuck",
        protocol: "legacy",
        makeTransport: () => client,
        timeoutMs: 60_000,
      });
      const outcome = opened.then(
        () => "opened",
        (err: Error) => err.message,
      );
      await vi.waitFor(() => expect(seen).toEqual(["initialize"]));
      await vi.advanceTimersByTimeAsync(60_000);
      expect(await outcome).toMatch(/Request timed out/);
    } finally {
      vi.useRealTimers();
    }
    await server.close();
    expect(seen).toEqual(["initialize"]);
  });
});
