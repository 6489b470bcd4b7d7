import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { McpError, PingRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { type McpSession, openSession } from "../../../src/io/mcp/session.js";
import { answeredWithError } from "../../../src/io/mcp/transportErrors.js";

const sessions: McpSession[] = [];
afterEach(async () => {
  await Promise.all(sessions.splice(0).map((s) => s.close()));
});

/** A real SDK server whose ping handler is replaced: `answer` throws or never settles. */
async function sessionWithPing(answer: () => Promise<never>): Promise<McpSession> {
  const server = new McpServer({ name: "no-ping", version: "1.0.0" });
  server.server.setRequestHandler(PingRequestSchema, answer);
  const [client, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const session = await openSession({
    name: "np",
    protocol: "legacy",
    makeTransport: () => client,
    timeoutMs: 2000,
  });
  sessions.push(session);
  return session;
}

/**
 * Ping is optional in MCP: servers that do not implement it answer with a JSON-RPC error. An answer
 * proves the connection alive; taking it for a failed keepalive reconnected such servers every interval.
 */
describe("keepalive ping answered with a JSON-RPC error", () => {
  for (const [code, text] of [
    [-32601, "Method not found"],
    [-32603, "Method not supported: ping"],
    [-32000, "Unknown method: ping"],
  ] as const) {
    it(`${code} ${text}: the ping succeeds`, async () => {
      const session = await sessionWithPing(async () => {
        throw new McpError(code, text);
      });
      await expect(session.ping(1000)).resolves.toBeUndefined();
    });
  }

  it("an answer that the session is gone still fails the ping (the keepalive reconnects)", async () => {
    const session = await sessionWithPing(async () => {
      throw new McpError(-32001, "Session not found");
    });
    await expect(session.ping(1000)).rejects.toThrow(/Session not found/);
  });

  it("no answer in time still fails the ping", async () => {
    const session = await sessionWithPing(() => new Promise<never>(() => undefined));
    await expect(session.ping(50)).rejects.toThrow(/Request timed out/);
  });

  it("a closed connection still fails the ping", async () => {
    const session = await sessionWithPing(() => new Promise<never>(() => undefined));
    const pending = session.ping(5000);
    await session.transport.close();
    await expect(pending).rejects.toThrow(/Connection closed/);
  });

  it("answeredWithError tells the server's answer from the SDK's own timeout and close errors", () => {
    expect(answeredWithError(new McpError(-32601, "Method not found"))).toBe(true);
    expect(answeredWithError(new McpError(-32603, "Method not supported: ping"))).toBe(true);
    // An answer that our session is gone is no sign of a live session: the keepalive reconnects.
    expect(answeredWithError(new McpError(-32001, "Session not found"))).toBe(false);
    expect(answeredWithError(new McpError(-32600, "Invalid or expired session"))).toBe(false);
    expect(answeredWithError(new McpError(-32001, "Request timed out", { timeout: 5 }))).toBe(false);
    expect(answeredWithError(new McpError(-32000, "Connection closed"))).toBe(false);
    expect(answeredWithError(new Error("Error POSTing to endpoint (HTTP 404)"))).toBe(false);
  });
});
