import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { mcpAgentTool } from "../../../src/agent/mcpTools.js";
import type { ToolContext } from "../../../src/agent/tools/tool.js";
import { SvcError } from "../../../src/errors.js";
import { toolContext } from "../../helpers/toolContext.js";

/** One registered MCP tool as the tool loop calls it, over a hub that records what reaches the server. */
function recordingTool() {
  const sent: Array<Record<string, unknown>> = [];
  const hub = {
    tools: () => [fxTool("pid")],
    status: () => [],
    settled: async () => undefined,
    async callRegistered(_name: string, args: Record<string, unknown>): Promise<CallToolResult> {
      sent.push(args);
      return { content: [{ type: "text", text: "ran" }] };
    },
  };
  const tool = mcpAgentTool(hub, fxTool("pid"));
  return { tool, sent };
}

/** Server fx's tool `original` as the hub registered it (no arguments). */
function fxTool(original: string): Parameters<typeof mcpAgentTool>[1] {
  return {
    name: `mcp__fx__${original}`,
    original,
    server: "fx",
    inputSchema: { type: "object", properties: {} },
  } as unknown as Parameters<typeof mcpAgentTool>[1];
}

const context: ToolContext = toolContext({ route: "r", deliveryId: "d" });

describe("an MCP tool's arguments as the model sent them", () => {
  it.each([
    ["null", null],
    ["a list", ["x"]],
    ["a string", "x"],
    ["a number", 5],
  ])("JSON that is %s is a tool error and reaches no server (not sent as {})", async (_, args) => {
    const { tool, sent } = recordingTool();
    expect(await tool.execute(args, context)).toEqual({
      ok: false,
      error: "arguments must be a JSON object; the tool was not run",
    });
    expect(sent).toEqual([]);
  });

  it("an object is sent as it is; no arguments at all are sent as {}", async () => {
    const { tool, sent } = recordingTool();
    expect((await tool.execute({ a: 1 }, context)).ok).toBe(true);
    expect((await tool.execute(undefined, context)).ok).toBe(true);
    expect(sent).toEqual([{ a: 1 }, {}]);
  });
});

describe("an MCP call whose outcome is unknown", () => {
  it("reaches the model as an outcome_uncertain error, not a plain failure it might retry", async () => {
    const message =
      'mcp_servers.fx: the session expired while "write" was being called; it may or may not have run — verify its effect before calling it again';
    const hub = {
      tools: () => [fxTool("write")],
      status: () => [],
      settled: async () => undefined,
      callRegistered: async (): Promise<CallToolResult> => {
        throw new SvcError("outcome_uncertain", message);
      },
    };
    const tool = mcpAgentTool(hub, fxTool("write"));
    expect(await tool.execute({}, context)).toEqual({ ok: false, error: `outcome_uncertain: ${message}` });
  });
});

describe("an MCP tool whose server a reload removed during the run", () => {
  it("is not called, and the model is told the server is gone", async () => {
    let called = false;
    const hub = {
      tools: () => [],
      status: () => [],
      settled: async () => undefined,
      callRegistered: async (): Promise<CallToolResult> => {
        called = true;
        return { content: [] };
      },
    };
    expect(await mcpAgentTool(hub, fxTool("write")).execute({}, context)).toEqual({
      ok: false,
      error:
        'mcp_servers.fx is no longer configured (a reload during this run removed it); "write" was not run',
    });
    expect(called).toBe(false);
  });
});

describe("an MCP tool whose server a reload disabled during the run", () => {
  it("is not called, and the model is told the server is disabled, not that its tools changed", async () => {
    let called = false;
    const hub = {
      tools: () => [],
      status: () => [{ name: "fx", state: "skipped" }],
      settled: async () => undefined,
      callRegistered: async (): Promise<CallToolResult> => {
        called = true;
        return { content: [] };
      },
    };
    expect(await mcpAgentTool(hub, fxTool("write")).execute({}, context)).toEqual({
      ok: false,
      error: 'mcp_servers.fx is disabled (a reload during this run set enabled: false); "write" was not run',
    });
    expect(called).toBe(false);
  });
});

describe("an MCP tool's description as the model gets it", () => {
  it("the server's own; none, or an empty or blank one, names the tool and its server", () => {
    const hub = {
      tools: () => [],
      status: () => [],
      settled: async () => undefined,
      callRegistered: async () => ({ content: [] }),
    };
    const described = (description: string | undefined) =>
      mcpAgentTool(hub, { ...fxTool("pid"), ...(description === undefined ? {} : { description }) })
        .description;
    expect(described("Prints the process id")).toBe("Prints the process id");
    for (const description of [undefined, "", " \n"])
      expect(described(description)).toBe("pid (MCP server fx)");
  });
});
