import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { captureLogger } from "../../fakes/logCapture.js";
import { IN_MEMORY_ENTRY, inMemoryServers } from "../../helpers/inMemoryMcp.js";
import { entry, useHubs } from "../../integration/mcp/harness.js";

const ctx = useHubs();

/** A server whose one tool logs with levels outside MCP's eight, as hand-written servers send them. */
function loggingServer(): Server {
  const server = new Server({ name: "logs", version: "1" }, { capabilities: { tools: {}, logging: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [{ name: "work", inputSchema: { type: "object" } }],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (_request, extra) => {
    const log = (params: Record<string, unknown>) =>
      extra.sendNotification({ method: "notifications/message", params } as never);
    await log({ level: "warn", logger: "db", data: "pool nearly full" });
    await log({ level: "FATAL", data: "disk gone" });
    await log({ level: "trace", data: "step 1" });
    await log({ level: "Warning", data: "slow" });
    await log({ level: "verbose", data: { rows: 3 } });
    await log({ level: "error", data: "a standard one" });
    // MCP requires `data`; a hand-written server may leave it out.
    await log({ level: "error", logger: "db" });
    // No level, or a number (pino's 50), as a hand-written server may send: info, not dropped.
    await log({ data: "no level" });
    await log({ level: 50, data: "numbered" });
    return { content: [{ type: "text", text: "done" }] };
  });
  return server;
}

describe("a server's log message with a level outside MCP's eight", () => {
  it("reaches the gateway log at the level its name means (it was dropped)", async () => {
    const log = captureLogger();
    const h = ctx.hub(
      ctx.home,
      { lg: entry({ ...IN_MEMORY_ENTRY, trust: "full" }) },
      { transportFor: inMemoryServers(() => loggingServer()), logger: log.logger },
    );
    await h.settled("lg");
    await h.call("lg", "work", {});
    const lines = log
      .lines()
      .map((line) => JSON.parse(line) as { level: number; msg: string; mcpLevel?: string })
      .filter((line) => line.msg.startsWith("[mcp:lg]"))
      .map((line) => [line.level, line.msg, line.mcpLevel]);
    expect(lines).toEqual([
      [40, "[mcp:lg] db: pool nearly full", "warn"],
      [50, "[mcp:lg] disk gone", "FATAL"],
      [20, "[mcp:lg] step 1", "trace"],
      [40, "[mcp:lg] slow", "Warning"],
      [30, '[mcp:lg] {"rows":3}', "verbose"],
      [50, "[mcp:lg] a standard one", "error"],
      [50, "[mcp:lg] db: (no data)", "error"],
      [30, "[mcp:lg] no level", undefined],
      [30, "[mcp:lg] numbered", "50"],
    ]);
  });
});
