import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { expect, it } from "vitest";
import { SERVER_LOG_MAX_CHARS } from "../../../src/actors/mcp/serverLog.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { IN_MEMORY_ENTRY, inMemoryServers } from "../../helpers/inMemoryMcp.js";
import { entry, useHubs } from "../../integration/mcp/harness.js";

const ctx = useHubs();

/**
 * A progress notification's `message` is the server's text, as a log message's `data` is (docs/mcp.md,
 * Tool calls): cut at the same 2000 characters, after the entry's credentials are redacted, so one chatty
 * server does not write megabytes into the gateway log per notification.
 */
it("a progress message is cut at 2000 characters, as a server's log message is", async () => {
  const server = new Server({ name: "busy", version: "1" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [{ name: "work", inputSchema: { type: "object" } }],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const progressToken = request.params._meta?.progressToken;
    if (progressToken !== undefined)
      await extra.sendNotification({
        method: "notifications/progress",
        params: { progressToken, progress: 1, total: 2, message: "p".repeat(100_000) },
      });
    return { content: [{ type: "text", text: "done" }] };
  });
  const log = captureLogger();
  const h = ctx.hub(
    ctx.home,
    { busy: entry({ ...IN_MEMORY_ENTRY, trust: "full" }) },
    { transportFor: inMemoryServers(() => server), logger: log.logger },
  );
  await h.settled("busy");
  await h.call("busy", "work", {});
  const line = log.messages().find((m) => m.startsWith('[mcp] busy: "work" progress 1/2 — '));
  expect(line).toBe(`[mcp] busy: "work" progress 1/2 — ${"p".repeat(SERVER_LOG_MAX_CHARS)}…`);
});
