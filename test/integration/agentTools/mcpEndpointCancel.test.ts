import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createMcpEndpointHost, type McpEndpointHost } from "../../../src/agent/mcpEndpoint/index.js";
import type { AgentTool } from "../../../src/agent/tools/tool.js";
import { toolContext } from "../../helpers/toolContext.js";

let host: McpEndpointHost | undefined;
afterEach(async () => {
  await host?.close();
  host = undefined;
});

/** A tool that runs until its call's signal ends, and records why it ended. */
function waitingTool(ended: string[], started: () => void): AgentTool {
  return {
    name: "wait_for_cancel",
    description: "Waits until canceled",
    inputSchema: { type: "object", properties: {} },
    execute: (_args, context) =>
      new Promise((resolve) => {
        started();
        context.signal.addEventListener(
          "abort",
          () => {
            ended.push("aborted");
            resolve({ ok: false, error: "canceled" });
          },
          { once: true },
        );
      }),
  };
}

describe("the command agents' MCP endpoint and notifications/cancelled", () => {
  it("a call its client cancels (notifications/cancelled on its own POST) is ended, as on any MCP server", async () => {
    host = createMcpEndpointHost();
    const ended: string[] = [];
    let started = () => {};
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    const endpoint = await host.openRunEndpoint([waitingTool(ended, () => started())], toolContext());
    const client = new Client({ name: "command-agent", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(endpoint.url), {
        requestInit: { headers: { Authorization: `Bearer ${endpoint.token}` } },
      }),
    );
    try {
      const controller = new AbortController();
      const call = client.callTool({ name: "wait_for_cancel", arguments: {} }, undefined, {
        signal: controller.signal,
      });
      await running;
      controller.abort("the agent moved on");
      await expect(call).rejects.toThrow();
      await vi.waitFor(() => expect(ended).toEqual(["aborted"]), { timeout: 5000, interval: 20 });
    } finally {
      await client.close();
    }
  });
});
