import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { expect, it, vi } from "vitest";
import { IN_MEMORY_ENTRY, inMemoryServers } from "../../helpers/inMemoryMcp.js";
import { entry, text, useHubs } from "./harness.js";

const ctx = useHubs();

/**
 * A server that handles one message at a time answers a tools/list sent during a long call only once the
 * call is done, after the listing's wait (connect_timeout) has run out: the tools it said had changed are
 * listed again once no call is in flight, not kept as they were until the next reconnect.
 */
it("a tools/list_changed refresh a busy server answered too late is listed again once its calls end", async () => {
  let tools = ["long"];
  let callDone: Promise<void> = Promise.resolve();
  const build = () => {
    const server = new Server(
      { name: "busy", version: "1" },
      { capabilities: { tools: { listChanged: true } } },
    );
    server.setRequestHandler(ListToolsRequestSchema, async () => {
      await callDone;
      return { tools: tools.map((name) => ({ name, inputSchema: { type: "object" as const } })) };
    });
    server.setRequestHandler(CallToolRequestSchema, async () => {
      let finish: () => void = () => undefined;
      callDone = new Promise((resolve) => {
        finish = resolve;
      });
      tools = ["long", "added"];
      await server.sendToolListChanged();
      await new Promise((resolve) => setTimeout(resolve, 600));
      finish();
      return { content: [{ type: "text", text: "done" }] };
    });
    return server;
  };
  const h = ctx.hub(
    ctx.home,
    { s: entry({ ...IN_MEMORY_ENTRY, connect_timeout: 0.2 }) },
    { transportFor: inMemoryServers({ s: build }) },
  );
  await h.settled("s");
  expect(text(await h.call("s", "long", {}))).toBe("done");
  await vi.waitFor(() => expect(h.tools().map((t) => t.name)).toContain("mcp__s__added"), {
    timeout: 5000,
    interval: 20,
  });
});
