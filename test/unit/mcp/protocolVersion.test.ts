import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { describe, expect, it } from "vitest";
import { mcpServerSchema } from "../../../src/config/sections/mcp.js";
import { connectServer } from "../../../src/io/mcp/connect.js";
import { unsupportedVersionHint } from "../../../src/io/mcp/eras.js";

/** A peer that answers `initialize` with `version`, as a server speaking a revision svc does not know. */
function answeringVersion(version: string) {
  return () => {
    const [client, server] = InMemoryTransport.createLinkedPair();
    server.onmessage = (message) => {
      if ("id" in message && "method" in message && message.method === "initialize")
        void server.send({
          jsonrpc: "2.0",
          id: message.id,
          result: {
            protocolVersion: version,
            capabilities: { tools: {} },
            serverInfo: { name: "n", version: "1" },
          },
        });
    };
    void server.start();
    return client;
  };
}

describe("a server answering initialize with a protocol version svc does not speak", () => {
  it("the connect error names the versions svc speaks and what to do", async () => {
    const entry = mcpServerSchema.parse({ command: "in-memory", protocol: "legacy" });
    await expect(
      connectServer("future", entry, {
        scope: () => ({ secrets: {}, env: {} }),
        interactive: false,
        transportFor: answeringVersion("2099-01-01"),
      }),
    ).rejects.toThrow(
      "mcp_servers.future: Server's protocol version is not supported: 2099-01-01 — svc speaks 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05, 2024-10-07 (and 2026-07-28 through server/discover): configure the server to offer one of them, or update svc",
    );
  });

  it('a blank version (protocolVersion: "") is named, quoted, with the versions svc speaks', async () => {
    const entry = mcpServerSchema.parse({ command: "in-memory", protocol: "legacy" });
    for (const version of ["", " "]) {
      await expect(
        connectServer("blank", entry, {
          scope: () => ({ secrets: {}, env: {} }),
          interactive: false,
          transportFor: answeringVersion(version),
        }),
      ).rejects.toThrow(
        `mcp_servers.blank: Server's protocol version is not supported: ${JSON.stringify(version)} (blank) — svc speaks 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05, 2024-10-07 (and 2026-07-28 through server/discover): configure the server to offer one of them, or update svc`,
      );
    }
  });

  it("no hint for other errors, or for the stateless revision (protocol: auto reaches it by server/discover)", () => {
    expect(unsupportedVersionHint("MCP error -32601: Method not found")).toBe("");
    expect(unsupportedVersionHint("Server's protocol version is not supported: 2026-07-28")).toBe("");
    // protocol: auto fell back after the server answered initialize with 2026-07-28, and the probe failed:
    // the version stands inside the fallback's parentheses, and needs no list of versions svc speaks.
    expect(
      unsupportedVersionHint(
        "initialize was refused (Server's protocol version is not supported: 2026-07-28), and the server/discover probe of the 2026-07-28 revision that protocol: auto tries next failed too (MCP error -32601: Method not found) — check that this is an MCP server",
      ),
    ).toBe("");
  });
});

/** A server of protocol version 2024-10-07, written by hand: its tools/call answers carry `toolResult`. */
function answeringToolResult(toolResult: unknown) {
  return () => {
    const [client, server] = InMemoryTransport.createLinkedPair();
    server.onmessage = (message) => {
      if (!("id" in message) || !("method" in message)) return;
      const answer = (result: Record<string, unknown>) =>
        void server.send({ jsonrpc: "2.0", id: message.id, result });
      if (message.method === "initialize")
        answer({
          protocolVersion: "2024-10-07",
          capabilities: { tools: {} },
          serverInfo: { name: "old", version: "0" },
        });
      else if (message.method === "tools/call") answer({ toolResult });
    };
    void server.start();
    return client;
  };
}

describe("tools/call answered by a 2024-10-07 server (toolResult instead of content)", () => {
  it("gives the toolResult as a text block, JSON for a value that is not a string, instead of no content", async () => {
    const call = async (toolResult: unknown) => {
      const session = await connectServer("old", mcpServerSchema.parse({ command: "in-memory" }), {
        scope: () => ({ secrets: {}, env: {} }),
        interactive: false,
        transportFor: answeringToolResult(toolResult),
      });
      try {
        return (await session.callTool("answer", {}, 5000)).content;
      } finally {
        await session.close();
      }
    };
    expect(await call({ answer: 42 })).toEqual([{ type: "text", text: '{"answer":42}' }]);
    expect(await call("forty-two")).toEqual([{ type: "text", text: "forty-two" }]);
  });
});
