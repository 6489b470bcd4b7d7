import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { describe, expect, it, vi } from "vitest";
import { mcpAgentTools } from "../../../src/agent/mcpTools.js";
import { IN_MEMORY_ENTRY, inMemoryServers } from "../../helpers/inMemoryMcp.js";
import { toolContext } from "../../helpers/toolContext.js";
import { entry, useHubs } from "../../integration/mcp/harness.js";

const ctx = useHubs();

/**
 * A server listing `a_b` (and `a-b`, which sanitizes to the same registered name and so loses it) and
 * `gone`; its `drop` tool removes `a_b` and `gone` (tools/list_changed), as a server whose tools change;
 * `drop-and-hold` does the same and answers once `hold` resolves.
 */
function changingServer(calls: string[], hold: Promise<void> = Promise.resolve()): McpServer {
  const server = new McpServer({ name: "changing", version: "1" });
  const ran = (name: string) => async () => {
    calls.push(name);
    return { content: [{ type: "text" as const, text: `${name} ran` }] };
  };
  const ab = server.registerTool("a_b", {}, ran("a_b"));
  server.registerTool("a-b", {}, ran("a-b"));
  const gone = server.registerTool("gone", {}, ran("gone"));
  server.registerTool("drop", {}, async () => {
    ab.remove();
    gone.remove();
    return { content: [{ type: "text" as const, text: "dropped" }] };
  });
  server.registerTool("drop-and-hold", {}, async () => {
    ab.remove();
    gone.remove();
    await hold;
    return { content: [{ type: "text" as const, text: "dropped" }] };
  });
  return server;
}

/** The tools a run is offered from `fx`, looked up by registered name. */
async function offeredTools(h: Parameters<typeof mcpAgentTools>[0]) {
  const tools = await mcpAgentTools(h, ["fx"], new AbortController().signal);
  return (name: string) => {
    const tool = tools.find((t) => t.name === name);
    if (tool === undefined) throw new Error(`run not offered ${name}`);
    return tool;
  };
}

describe("a server's tools change (tools/list_changed) while a run goes on", () => {
  it("a tool the run was offered and the server no longer lists is not run, and its name is never another tool's", async () => {
    const calls: string[] = [];
    const h = ctx.hub(
      ctx.home,
      { fx: entry({ ...IN_MEMORY_ENTRY, trust: "full" }) },
      { transportFor: inMemoryServers(() => changingServer(calls)) },
    );
    await h.settled("fx");
    const byName = await offeredTools(h);
    const context = toolContext({ route: "r", deliveryId: "d" });
    expect(await byName("mcp__fx__drop").execute({}, context)).toMatchObject({ ok: true });
    // The server's new listing registers a-b as mcp__fx__a_b, the name the run was offered for a_b.
    await vi.waitFor(() => expect(h.tools().find((t) => t.name === "mcp__fx__a_b")?.original).toBe("a-b"), {
      timeout: 3000,
      interval: 10,
    });
    expect(await byName("mcp__fx__a_b").execute({}, context)).toEqual({
      ok: false,
      error:
        'mcp_servers.fx no longer offers "a_b" (its tools changed during this run; mcp__fx__a_b is now its tool "a-b", which this run was not offered); the tool was not run',
    });
    expect(await byName("mcp__fx__gone").execute({}, context)).toEqual({
      ok: false,
      error:
        'mcp_servers.fx no longer offers "gone" (its tools changed during this run); the tool was not run',
    });
    expect(calls).toEqual([]);
  });
});

describe("a server's tools change while a call waits for the server's earlier call", () => {
  it("the waiting call is not sent, nor is the tool that took its registered name run on its arguments", async () => {
    const calls: string[] = [];
    let release: () => void = () => undefined;
    const hold = new Promise<void>((resolve) => {
      release = resolve;
    });
    const h = ctx.hub(
      ctx.home,
      { fx: entry({ ...IN_MEMORY_ENTRY, trust: "full" }) },
      { transportFor: inMemoryServers(() => changingServer(calls, hold)) },
    );
    await h.settled("fx");
    const byName = await offeredTools(h);
    const context = toolContext({ route: "r", deliveryId: "d" });
    const holding = byName("mcp__fx__drop_and_hold").execute({}, context);
    // Both wait for the server's one call at a time, made while the run's listing still had their tools.
    const ab = byName("mcp__fx__a_b").execute({}, context);
    const gone = byName("mcp__fx__gone").execute({}, context);
    await vi.waitFor(() => expect(h.tools().find((t) => t.name === "mcp__fx__a_b")?.original).toBe("a-b"), {
      timeout: 3000,
      interval: 10,
    });
    release();
    expect(await holding).toMatchObject({ ok: true });
    expect(await ab).toEqual({
      ok: false,
      error:
        'mcp_servers.fx no longer offers "a_b" (its tools changed while the call waited for its turn; mcp__fx__a_b is now its tool "a-b"); the tool was not run',
    });
    expect(await gone).toEqual({
      ok: false,
      error:
        'mcp_servers.fx no longer offers "gone" (its tools changed while the call waited for its turn); the tool was not run',
    });
    expect(calls).toEqual([]);
  });
});

/** A server listing `a_b` and `a-b` (which loses the registered name mcp__fx__a_b to it), or `a-b` alone. */
function renamingServer(calls: string[], withAB: boolean): McpServer {
  const server = new McpServer({ name: "renaming", version: withAB ? "1" : "2" });
  const ran = (name: string) => async () => {
    calls.push(name);
    return { content: [{ type: "text" as const, text: `${name} ran` }] };
  };
  if (withAB) server.registerTool("a_b", {}, ran("a_b"));
  server.registerTool("a-b", {}, ran("a-b"));
  return server;
}

describe("the live listing no longer has the tool a call was made for, and another tool has its name", () => {
  it("a lazy server's cached tool is not run as the tool that now has its registered name", async () => {
    const calls: string[] = [];
    const lazy = entry({ ...IN_MEMORY_ENTRY, trust: "full", lazy: true });
    const first = ctx.hub(
      ctx.home,
      { fx: lazy },
      { transportFor: inMemoryServers(() => renamingServer(calls, true)) },
    );
    await first.settled("fx");
    await first.stop();
    const h = ctx.hub(
      ctx.home,
      { fx: lazy },
      { transportFor: inMemoryServers(() => renamingServer(calls, false)) },
    );
    expect(h.status()[0]).toMatchObject({ state: "lazy", cached: true });
    await expect(h.callRegistered("mcp__fx__a_b", {})).rejects.toThrow(
      'mcp_servers.fx no longer offers "a_b" (the server, connected for this call, does not list it: its tools changed since the listing it was registered from; mcp__fx__a_b is now its tool "a-b"); the tool was not run',
    );
    expect(calls).toEqual([]);
  });

  it("a call whose approval waited while the server's tools changed is not run as the tool that now has its name", async () => {
    const calls: string[] = [];
    let server: McpServer | undefined;
    let approved: (yes: boolean) => void = () => undefined;
    let asked: () => void = () => undefined;
    const asking = new Promise<void>((resolve) => {
      asked = resolve;
    });
    const h = ctx.hub(
      ctx.home,
      { fx: entry({ ...IN_MEMORY_ENTRY, trust: "untrusted" }) },
      {
        transportFor: inMemoryServers(() => {
          server = renamingServer(calls, true);
          return server;
        }),
        approvals: {
          approve: () =>
            new Promise<boolean>((resolve) => {
              approved = resolve;
              asked();
            }),
          elicit: async () => ({ action: "decline" }),
        },
      },
    );
    await h.settled("fx");
    const call = h.callRegistered("mcp__fx__a_b", {});
    await asking;
    // While the question waits, the server drops a_b: a-b takes its registered name.
    (
      server as unknown as { _registeredTools: Record<string, { remove(): void }> }
    )._registeredTools.a_b?.remove();
    await vi.waitFor(() => expect(h.tools().find((t) => t.name === "mcp__fx__a_b")?.original).toBe("a-b"), {
      timeout: 3000,
      interval: 10,
    });
    approved(true);
    await expect(call).rejects.toThrow('mcp_servers.fx no longer offers "a_b"');
    expect(calls).toEqual([]);
  });
});
