import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { McpHub } from "../../../src/actors/mcp/hub.js";
import { mcpAgentTools } from "../../../src/agent/mcpTools.js";
import type { TransportFor } from "../../../src/io/mcp/connect.js";
import { buildServer } from "../../fixtures/mcp/server.mjs";
import { IN_MEMORY_ENTRY } from "../../helpers/inMemoryMcp.js";
import { entry, useHubs } from "../../integration/mcp/harness.js";

/**
 * A run that waits for a server's first connect goes on waiting when a reload changes the server's entry
 * meanwhile (docs/agent.md, Tools in a run): the reload stops the connect the run waited for and starts
 * another, which the run waits for in what is left of its 30 s. Real SDK servers (the fixture's echo) over
 * in-memory transports, each connect answered once the test lets that server start.
 */

const ctx = useHubs();

/** A `transportFor` whose servers start (take their transport) only once `start(n)` is called for the n-th connect. */
function slowStarts(): { transportFor: TransportFor; connects: () => number; start: (n: number) => void } {
  const pending: Array<() => void> = [];
  return {
    transportFor: () => {
      const [client, server] = InMemoryTransport.createLinkedPair();
      pending.push(() => void buildServer().connect(server));
      return client;
    },
    connects: () => pending.length,
    start: (n) => pending[n]?.(),
  };
}

// A connect_timeout far past the run's wait: only the run's 30 s decides here.
const first = entry({ ...IN_MEMORY_ENTRY, connect_timeout: 600 });
const changed = entry({ ...IN_MEMORY_ENTRY, connect_timeout: 600, timeout: 44 });

async function waitingRun(h: McpHub) {
  const gaveUp: Array<{ servers: readonly string[]; waitedMs: number }> = [];
  const down: unknown[] = [];
  let offered: string[] | undefined;
  const run = mcpAgentTools(h, ["z"], new AbortController().signal, 30_000, {
    onGaveUp: (servers, waitedMs) => gaveUp.push({ servers, waitedMs }),
    onDown: (servers) => down.push(servers),
  }).then((tools) => {
    offered = tools.map((t) => t.name);
    return offered;
  });
  return { run, gaveUp, down, offered: () => offered };
}

describe("a reload that changes a server's entry while a run waits for its first connect", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("the run waits for the new connect and is offered the server's tools", async () => {
    const servers = slowStarts();
    const h = ctx.hub(ctx.home, { z: first }, { transportFor: servers.transportFor });
    await vi.waitFor(() => expect(servers.connects()).toBe(1), { timeout: 3000, interval: 10 });
    const waiting = await waitingRun(h);
    await h.reload({ z: changed });
    await vi.waitFor(() => expect(servers.connects()).toBe(2), { timeout: 3000, interval: 10 });
    // The connect it waited for is gone: the run still waits.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(waiting.offered()).toBeUndefined();
    servers.start(1);
    expect(await waiting.run).toContain("mcp__z__echo");
    expect(waiting.gaveUp).toEqual([]);
    expect(waiting.down).toEqual([]);
  });

  it("a new connect still under way 30 s after the run began leaves it without the server's tools, and says after how long", async () => {
    vi.useFakeTimers();
    const servers = slowStarts();
    const h = ctx.hub(ctx.home, { z: first }, { transportFor: servers.transportFor });
    await vi.advanceTimersByTimeAsync(10);
    expect(servers.connects()).toBe(1);
    const waiting = await waitingRun(h);
    await vi.advanceTimersByTimeAsync(10_000);
    await h.reload({ z: changed });
    await vi.advanceTimersByTimeAsync(10);
    expect(servers.connects()).toBe(2);
    // 30 s from the run's start, not from the reload's.
    await vi.advanceTimersByTimeAsync(19_970);
    expect(waiting.offered()).toBeUndefined();
    await vi.advanceTimersByTimeAsync(20);
    expect(await waiting.run).toEqual([]);
    expect(waiting.gaveUp).toEqual([{ servers: ["z"], waitedMs: 30_000 }]);
  });
});
