import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { RegisteredTool } from "../../../src/actors/mcp/toolNames.js";
import { type McpToolSource, mcpAgentTools } from "../../../src/agent/mcpTools.js";
import { unofferedServerTools } from "../../../src/agent/unofferedTools.js";

/**
 * A run waits for a server's first connect only (docs/agent.md, Tools in a run): a server that is
 * connecting with its tools already registered — a lazy server woken by another run's call, a recycled
 * process respawning — does not hold the run's start up to the 30 s wait.
 */

const tool = (server: string, name: string): RegisteredTool => ({
  name: `mcp__${server}__${name}`,
  server,
  original: name,
  kind: "native",
  readOnly: true,
  inputSchema: { type: "object" },
});

function source(tools: RegisteredTool[]): McpToolSource & { waited: string[] } {
  const waited: string[] = [];
  return {
    waited,
    tools: () => tools,
    status: () => [
      { name: "lazy", state: "connecting" },
      { name: "fresh", state: "connecting" },
    ],
    settled(server) {
      waited.push(server);
      // The connect never ends in this test.
      return new Promise(() => undefined);
    },
    callRegistered: () => Promise.resolve({ content: [] } as CallToolResult),
  };
}

const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe("a run's MCP tools while a server connects", () => {
  it("offers a connecting server's registered tools at once, without waiting for its connect", async () => {
    const hub = source([tool("lazy", "lookup")]);
    let tools: string[] | undefined;
    void mcpAgentTools(hub, ["lazy"], new AbortController().signal).then((t) => {
      tools = t.map((x) => x.name);
    });
    await turns(5);
    expect(tools).toEqual(["mcp__lazy__lookup"]);
    expect(hub.waited).toEqual([]);
  });

  it("still waits for a server making its first connect (no tools registered yet)", async () => {
    const hub = source([tool("lazy", "lookup")]);
    const run = new AbortController();
    let done = false;
    const offered = mcpAgentTools(hub, ["lazy", "fresh"], run.signal).then((t) => {
      done = true;
      return t.map((x) => x.name);
    });
    await turns(5);
    expect(done).toBe(false);
    expect(hub.waited).toEqual(["fresh"]);
    run.abort();
    expect(await offered).toEqual(["mcp__lazy__lookup"]);
  });

  describe("when the wait ends with a server still connecting", () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it("names the servers the run goes on without; an aborted run names none", async () => {
      vi.useFakeTimers();
      const hub = source([tool("lazy", "lookup")]);
      const gaveUp: (readonly string[])[] = [];
      const offered = mcpAgentTools(hub, ["lazy", "fresh"], new AbortController().signal, 30_000, {
        onGaveUp: (s) => gaveUp.push(s),
      });
      await vi.advanceTimersByTimeAsync(29_999);
      expect(gaveUp).toEqual([]);
      await vi.advanceTimersByTimeAsync(1);
      expect((await offered).map((t) => t.name)).toEqual(["mcp__lazy__lookup"]);
      expect(gaveUp).toEqual([["fresh"]]);

      const run = new AbortController();
      const stopped: (readonly string[])[] = [];
      const aborted = mcpAgentTools(hub, ["fresh"], run.signal, 30_000, {
        onGaveUp: (s) => stopped.push(s),
      });
      run.abort();
      await aborted;
      expect(stopped).toEqual([]);
    });
  });
});

describe("a run's MCP tools while a selected server is down", () => {
  const down = (tools: RegisteredTool[]): McpToolSource => ({
    tools: () => tools,
    status: () => [
      { name: "lost", state: "reconnecting", lastError: "mcp_servers.lost: the process exited (code 1)" },
      { name: "broken", state: "failed", lastError: "mcp_servers.broken: command not found: nodee" },
      { name: "lazy", state: "lazy" },
    ],
    settled: () => Promise.resolve(undefined),
    callRegistered: () => Promise.resolve({ content: [] } as CallToolResult),
  });

  it("names each selected server that is failed or reconnecting with no tools registered, with its error", async () => {
    const reported: unknown[] = [];
    const offered = await mcpAgentTools(
      down([]),
      ["lost", "broken", "lazy"],
      new AbortController().signal,
      30_000,
      {
        onDown: (s) => reported.push(s),
      },
    );
    expect(offered).toEqual([]);
    expect(reported).toEqual([
      [
        { server: "lost", state: "reconnecting", error: "the process exited (code 1)" },
        { server: "broken", state: "failed", error: "command not found: nodee" },
      ],
    ]);
  });

  it("names none whose tools are still registered (a recycled process respawning), nor one not selected", async () => {
    const reported: unknown[] = [];
    const offered = await mcpAgentTools(
      down([tool("lost", "lookup")]),
      ["lost"],
      new AbortController().signal,
      30_000,
      {
        onDown: (s) => reported.push(s),
      },
    );
    expect(offered.map((t) => t.name)).toEqual(["mcp__lost__lookup"]);
    expect(reported).toEqual([]);
  });
});

describe("a run's MCP tools while a reload replaces a selected server's connection", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  // The reload has stopped the server's runtime and not yet put the new one in its place.
  const replacing = (): McpToolSource => ({
    tools: () => [],
    status: () => [{ name: "z", state: "stopped", lastError: "mcp_servers.z: an earlier connect's error" }],
    settled: () => new Promise(() => undefined),
    callRegistered: () => Promise.resolve({ content: [] } as CallToolResult),
  });

  it("waits for it as for a first connect, and names it when the wait ends with it not yet connected", async () => {
    vi.useFakeTimers();
    const gaveUp: unknown[] = [];
    const offered = mcpAgentTools(replacing(), ["z"], new AbortController().signal, 30_000, {
      onGaveUp: (servers, waitedMs) => gaveUp.push([servers, waitedMs]),
    });
    await vi.advanceTimersByTimeAsync(29_999);
    expect(gaveUp).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(await offered).toEqual([]);
    expect(gaveUp).toEqual([[["z"], 30_000]]);
  });

  it("a call of its tool names the server rather than listing the tools there are", () => {
    const why = unofferedServerTools(replacing(), ["z"], []);
    expect(why("mcp__z__echo")).toBe(
      'mcp_servers.z was not connected when this run began (a reload that changed its entry was connecting it again), so the run was not offered its tools; "mcp__z__echo" was not run',
    );
  });
});

/**
 * A call of an unoffered server's tool says why the server was not connected when the run's tools were
 * chosen (docs/agent.md, Tools in a run): the reason was read at the call, so a server connecting then and
 * connected by the call was said "(still connected)".
 */
describe("why a run was not offered a server's tools, when the server's state changed since", () => {
  const changing = (state: { now: string; lastError?: string }): McpToolSource => ({
    tools: () => [],
    status: () => (state.now === "removed" ? [] : [{ name: "y", ...state, state: state.now }]),
    settled: () => new Promise(() => undefined),
    callRegistered: () => Promise.resolve({ content: [] } as CallToolResult),
  });

  it("gives the state the run began with, and says the server has connected since", () => {
    const state = { now: "connecting" };
    const why = unofferedServerTools(changing(state), ["y"], []);
    expect(why("mcp__y__echo")).toBe(
      'mcp_servers.y was not connected when this run began (still connecting), so the run was not offered its tools; "mcp__y__echo" was not run',
    );
    state.now = "connected";
    expect(why("mcp__y__echo")).toBe(
      'mcp_servers.y was not connected when this run began (it was still connecting then; it has connected since, and the next run is offered its tools), so the run was not offered its tools; "mcp__y__echo" was not run',
    );
  });

  it("keeps a failed server's error of then, and says so of one a reload has removed since", () => {
    const state: { now: string; lastError?: string } = {
      now: "failed",
      lastError: "mcp_servers.y: command not found: nodee",
    };
    const why = unofferedServerTools(changing(state), ["y"], []);
    state.now = "connected";
    delete state.lastError;
    expect(why("mcp__y__echo")).toBe(
      'mcp_servers.y was not connected when this run began (mcp_servers.y: command not found: nodee; it has connected since, and the next run is offered its tools), so the run was not offered its tools; "mcp__y__echo" was not run',
    );
    state.now = "removed";
    expect(why("mcp__y__echo")).toBe(
      'mcp_servers.y was not connected when this run began (mcp_servers.y: command not found: nodee; a reload has removed it from mcp_servers since), so the run was not offered its tools; "mcp__y__echo" was not run',
    );
  });
});
