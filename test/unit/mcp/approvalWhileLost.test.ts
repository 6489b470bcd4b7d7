import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { describe, expect, it } from "vitest";
import { IN_MEMORY_ENTRY, inMemoryServers } from "../../helpers/inMemoryMcp.js";
import { entry, text, useHubs } from "../../integration/mcp/harness.js";

const ctx = useHubs();

/**
 * An untrusted server's call waits for a person's yes. When the connection is lost meanwhile (a stdio
 * process that crashed, a dropped SSE stream) and svc reconnects, the approved call runs on the live
 * session, not on the one it found before asking — the call was never sent, so it is no lost call either.
 */
describe("a call approved after its connection was lost runs on the new session (trust rules, reconnect)", () => {
  it("the server connected for the call dies during the approval: the call runs once on the reconnected server", async () => {
    const servers: McpServer[] = [];
    const calls: number[] = [];
    const transportFor = inMemoryServers({
      notes: () => {
        const s = new McpServer({ name: "notes", version: "1" });
        const index = servers.length;
        s.registerTool("write", { description: "writes a note" }, async () => {
          calls.push(index);
          return { content: [{ type: "text", text: `written by server ${index}` }] };
        });
        servers.push(s);
        return s;
      },
    });
    const h = ctx.hub(
      ctx.home,
      { notes: entry({ ...IN_MEMORY_ENTRY, trust: "untrusted" }) },
      {
        transportFor,
        approvals: {
          // The person answers after the server the call connected to has gone away.
          approve: async () => {
            await servers[0]?.close();
            return true;
          },
          elicit: async () => ({ action: "decline" }),
        },
      },
    );
    // Called before its first connect ended: the call connects, then asks.
    const result = await h.call("notes", "write", {});
    expect(text(result)).toBe("written by server 1");
    expect(calls).toEqual([1]);
  });
});
