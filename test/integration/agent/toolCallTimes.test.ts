import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApprovalSurface } from "../../../src/actors/mcp/approvals.js";
import { modelRunner } from "../../../src/agent/modelRunner.js";
import { silentLogger } from "../../../src/io/log.js";
import { type FakeModel, startFakeOpenAI } from "../../fakes/openaiServer.js";
import { type FakeClock, fakeClock } from "../../helpers/gateway.js";
import { IN_MEMORY_ENTRY, inMemoryServers } from "../../helpers/inMemoryMcp.js";
import { entry, useHubs } from "../mcp/harness.js";

/**
 * A tool call's `ms` (the run record, the run's log line) counts from when its request is sent to the MCP
 * server, where its timeout counts from (docs/agent.md, What a run records): not the time it waited for the
 * server's earlier call (one at a time), nor for an approval; a call never sent takes none. The server (the
 * SDK's McpServer) and the approval surface move the run's clock as the time they take.
 */

let model: FakeModel;
beforeAll(async () => {
  model = await startFakeOpenAI();
});
afterAll(() => model.close());
const ctx = useHubs();

function notes(clock: FakeClock): McpServer {
  const server = new McpServer({ name: "notes", version: "1.0.0" });
  server.registerTool("lookup", { annotations: { readOnlyHint: true } }, () => {
    clock.advance(1000);
    return { content: [{ type: "text", text: "found" }] };
  });
  server.registerTool("save", {}, () => {
    clock.advance(20);
    return { content: [{ type: "text", text: "saved" }] };
  });
  server.registerTool("drop", {}, () => ({ content: [{ type: "text", text: "dropped" }] }));
  return server;
}

/**
 * Approves `save` after 500 ms of someone's thought; refuses `drop` after 700. The answer comes in a later
 * turn of the event loop, as a person's does: the call before it has been timed by then.
 */
function slowApprovals(clock: FakeClock): ApprovalSurface {
  return {
    async approve(request) {
      await new Promise((resolve) => setImmediate(resolve));
      clock.advance(request.tool === "save" ? 500 : 700);
      return request.tool === "save";
    },
    elicit: async () => ({ action: "decline" }),
  };
}

describe("a tool call's ms", () => {
  it("counts from its request's sending: not its wait for the server's earlier call or an approval; a refused call 0", async () => {
    const clock = fakeClock();
    const hub = ctx.hub(
      ctx.home,
      { notes: entry({ ...IN_MEMORY_ENTRY, trust: "untrusted" }) },
      { transportFor: inMemoryServers({ notes: () => notes(clock) }), approvals: slowApprovals(clock) },
    );
    await hub.settled("notes");
    const runner = modelRunner({
      settings: {
        provider: "openai",
        model: "m",
        base_url: model.baseUrl,
        api_key: "k",
        max_steps: 3,
        max_tokens: 10,
        retries: 0,
        timeout_seconds: 30,
        max_concurrent_runs: 1,
        max_tool_result_chars: 100_000,
      },
      logger: silentLogger(),
      elapsed: clock.elapsed,
      mcp: () => hub,
    });
    // One turn, so the three calls are made at once and queue for the server one after another.
    model.script(
      {
        toolCalls: [
          { name: "mcp__notes__lookup", args: {} },
          { name: "mcp__notes__save", args: {} },
          { name: "mcp__notes__drop", args: {} },
        ],
      },
      { text: "ok" },
    );
    const result = await runner.run(
      { route: "r", event: "e", deliveryId: "d", prompt: "p", toolsets: ["notes"], profile: undefined },
      new AbortController().signal,
    );
    expect(result.record?.toolCalls).toEqual([
      { name: "mcp__notes__lookup", ms: 1000, ok: true },
      // Queued behind lookup (1000 ms), then approved (500 ms): only its own 20 ms.
      { name: "mcp__notes__save", ms: 20, ok: true },
      { name: "mcp__notes__drop", ms: 0, ok: false, error: expect.stringContaining("it was denied") },
    ]);
    // The run's own time is everything.
    expect(result.record?.ms).toBe(1000 + 500 + 20 + 700);
  });
});
