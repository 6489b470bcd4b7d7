import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { describe, expect, it } from "vitest";
import { openSession } from "../../../src/io/mcp/session.js";

/** A JSON-RPC peer that answers every request with -32601 (not an MCP server: another JSON-RPC program). */
function refusingEverything(): Transport {
  const [client, server] = InMemoryTransport.createLinkedPair();
  server.onmessage = (message) => {
    if ("id" in message && "method" in message)
      void server.send({
        jsonrpc: "2.0",
        id: message.id,
        error: { code: -32601, message: "Method not found" },
      });
  };
  void server.start();
  return client;
}

describe("protocol: auto when the server/discover fallback fails too", () => {
  it("the error says initialize was refused first, not only the probe's 'Method not found'", async () => {
    await expect(
      openSession({ name: "x", protocol: "auto", makeTransport: refusingEverything, timeoutMs: 2000 }),
    ).rejects.toThrow(
      "initialize was refused (MCP error -32601: Method not found), and the server/discover probe of the 2026-07-28 revision that protocol: auto tries next failed too (MCP error -32601: Method not found) — check that this is an MCP server",
    );
  });
});
