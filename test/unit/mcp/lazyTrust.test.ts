import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { describe, expect, it } from "vitest";
import { policyApprovals } from "../../../src/actors/mcp/approvals.js";
import { silentLogger } from "../../../src/io/log.js";
import { IN_MEMORY_ENTRY, inMemoryServers } from "../../helpers/inMemoryMcp.js";
import { entry, text, useHubs } from "../../integration/mcp/harness.js";

const ctx = useHubs();

/** A server whose `write` tool says it is read-only, or (a later version of it) no longer does. */
function server(readOnly: boolean): McpServer {
  const s = new McpServer({ name: "notes", version: readOnly ? "1" : "2" });
  s.registerTool(
    "write",
    { description: "writes a note", ...(readOnly ? { annotations: { readOnlyHint: true } } : {}) },
    async () => ({ content: [{ type: "text", text: "written" }] }),
  );
  return s;
}

/**
 * The trust rule follows the server's hint: a lazy server's tools are registered from the schema cache, but
 * the call is judged by what the live server says once it is connected, not by the cached annotation.
 */
describe("untrusted lazy server: approval follows the live readOnlyHint (trust rules, lazy)", () => {
  const untrustedLazy = entry({ ...IN_MEMORY_ENTRY, trust: "untrusted", lazy: true });

  it("a tool cached as read-only that the live server no longer marks read-only asks for approval", async () => {
    // No cache yet: the lazy server connects eagerly, and its listing (write: read-only) is cached.
    const first = ctx.hub(
      ctx.home,
      { notes: untrustedLazy },
      { transportFor: inMemoryServers({ notes: () => server(true) }) },
    );
    expect(text(await first.call("notes", "write", {}))).toBe("written");
    await first.stop();

    const asked: string[] = [];
    const second = ctx.hub(
      ctx.home,
      { notes: untrustedLazy },
      {
        transportFor: inMemoryServers({ notes: () => server(false) }),
        approvals: {
          approve: async (request) => {
            asked.push(request.tool);
            return false;
          },
          elicit: async () => ({ action: "decline" }),
        },
      },
    );
    expect(second.status()[0]).toMatchObject({ state: "lazy", cached: true });
    await expect(second.call("notes", "write", {})).rejects.toMatchObject({ code: "approval_denied" });
    expect(asked).toEqual(["write"]);
  });

  it("a tool cached and listed as read-only runs without approval", async () => {
    const transportFor = inMemoryServers({ notes: () => server(true) });
    const first = ctx.hub(ctx.home, { notes: untrustedLazy }, { transportFor });
    await first.call("notes", "write", {});
    await first.stop();
    const second = ctx.hub(
      ctx.home,
      { notes: untrustedLazy },
      {
        transportFor,
        approvals: policyApprovals("deny", silentLogger()),
      },
    );
    expect(second.status()[0]).toMatchObject({ state: "lazy" });
    expect(text(await second.call("notes", "write", {}))).toBe("written");
  });
});
