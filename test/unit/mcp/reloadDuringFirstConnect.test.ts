import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { McpHub } from "../../../src/actors/mcp/hub.js";
import { mcpAgentTools } from "../../../src/agent/mcpTools.js";
import type { TransportFor } from "../../../src/io/mcp/connect.js";
import { buildServer } from "../../fixtures/mcp/server.mjs";
import { tempHome } from "../../helpers/home.js";
import { IN_MEMORY_ENTRY } from "../../helpers/inMemoryMcp.js";
import { entry, makeHub, useHubs } from "../../integration/mcp/harness.js";

/**
 * A run that waits for a server's first connect goes on waiting when a reload changes the server's entry
 * meanwhile (docs/agent.md, Tools in a run): the reload stops the connect the run waited for and starts
 * another, which the run waits for in what is left of its 30 s. Real SDK servers (the fixture's echo) over
 * in-memory transports, each connect answered once the test lets that server start.
 */

const ctx = useHubs();

// A first connect, on real timers, before any test's: a process's first connect imports the MCP SDK's client
// and transports (src/io/mcp/connect.ts), which takes real time a fake clock's advance does not wait for, so a
// test run alone saw its servers' connects still under way after its advances. Each test runs alone as it
// does after another.
beforeAll(async () => {
  const home = tempHome();
  const h = makeHub(
    home,
    { w: entry(IN_MEMORY_ENTRY) },
    {
      transportFor: () => {
        const [client, server] = InMemoryTransport.createLinkedPair();
        void buildServer().connect(server);
        return client;
      },
    },
  );
  try {
    await vi.waitFor(() => expect(h.tools().map((t) => t.server)).toContain("w"), {
      timeout: 10_000,
      interval: 10,
    });
  } finally {
    await h.stop();
    home.cleanup();
  }
});

/**
 * A `transportFor` whose servers start (take their transport) only once `start(n)` is called for the n-th
 * connect, and whose n-th connect fails, as a process exiting does, once `close(n)` is called;
 * `named(server)` is the list of `server`'s connects, by their n.
 */
function slowStarts(): {
  transportFor: TransportFor;
  connects: () => number;
  start: (n: number) => void;
  close: (n: number) => void;
  named: (server: string) => number[];
} {
  const pending: Array<() => void> = [];
  const ends: InMemoryTransport[] = [];
  const names: string[] = [];
  return {
    transportFor: (name) => {
      const [client, server] = InMemoryTransport.createLinkedPair();
      pending.push(() => void buildServer().connect(server));
      ends.push(server);
      names.push(name);
      return client;
    },
    connects: () => pending.length,
    start: (n) => pending[n]?.(),
    close: (n) => void ends[n]?.close(),
    named: (server) => names.flatMap((name, n) => (name === server ? [n] : [])),
  };
}

// A connect_timeout far past the run's wait: only the run's 30 s decides here.
const first = entry({ ...IN_MEMORY_ENTRY, connect_timeout: 600 });
const changed = entry({ ...IN_MEMORY_ENTRY, connect_timeout: 600, timeout: 44 });

async function waitingRun(h: McpHub, selected: readonly string[] = ["z"]) {
  const gaveUp: Array<{ servers: readonly string[]; waitedMs: number }> = [];
  const down: unknown[] = [];
  const waits: Array<readonly string[]> = [];
  let offered: string[] | undefined;
  const run = mcpAgentTools(h, selected, new AbortController().signal, 30_000, {
    onWait: (servers) => waits.push(servers),
    onGaveUp: (servers, waitedMs) => gaveUp.push({ servers, waitedMs }),
    onDown: (servers) => down.push(servers),
  }).then((tools) => {
    offered = tools.map((t) => t.name);
    return offered;
  });
  return { run, gaveUp, down, waits, offered: () => offered };
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

  it("a server connected when the run began, whose entry the same reload changes, is waited for too, in what is left of the 30 s", async () => {
    vi.useFakeTimers();
    const servers = slowStarts();
    const h = ctx.hub(ctx.home, { z: first, y: first }, { transportFor: servers.transportFor });
    await vi.advanceTimersByTimeAsync(10);
    expect(servers.connects()).toBe(2);
    servers.start(servers.named("y")[0] as number);
    await vi.advanceTimersByTimeAsync(10);
    expect(h.tools().map((t) => t.server)).toContain("y");
    // The run waits for z's first connect only: y is connected, its tools registered.
    const waiting = await waitingRun(h, ["z", "y"]);
    await vi.advanceTimersByTimeAsync(1000);
    expect(waiting.waits).toEqual([["z"]]);
    await h.reload({ z: changed, y: changed });
    await vi.advanceTimersByTimeAsync(10);
    expect(servers.connects()).toBe(4);
    // z's new connect ends at once; y's 1.5 s after it.
    servers.start(servers.named("z")[1] as number);
    await vi.advanceTimersByTimeAsync(1500);
    expect(waiting.offered()).toBeUndefined();
    expect(waiting.waits).toEqual([["z"], ["y"]]);
    servers.start(servers.named("y")[1] as number);
    await vi.advanceTimersByTimeAsync(10);
    expect((await waiting.run).filter((name) => name.endsWith("__echo"))).toEqual([
      "mcp__z__echo",
      "mcp__y__echo",
    ]);
    expect(waiting.gaveUp).toEqual([]);
    expect(waiting.down).toEqual([]);
  });

  it("a server connected with no tools registered when the run began (a filter allowing none), whose entry the reload changes, is waited for too", async () => {
    vi.useFakeTimers();
    const servers = slowStarts();
    const none = entry({ ...IN_MEMORY_ENTRY, connect_timeout: 600, tools: { include: [] } });
    const h = ctx.hub(ctx.home, { z: first, y: none }, { transportFor: servers.transportFor });
    await vi.advanceTimersByTimeAsync(10);
    servers.start(servers.named("y")[0] as number);
    await vi.advanceTimersByTimeAsync(10);
    expect(h.status().find((s) => s.name === "y")?.state).toBe("connected");
    expect(h.tools().filter((t) => t.server === "y")).toEqual([]);
    const waiting = await waitingRun(h, ["z", "y"]);
    await vi.advanceTimersByTimeAsync(1000);
    await h.reload({ z: first, y: first });
    await vi.advanceTimersByTimeAsync(10);
    // z connects; y's new connect is still under way 1.5 s after.
    servers.start(servers.named("z")[0] as number);
    await vi.advanceTimersByTimeAsync(1500);
    expect(waiting.offered()).toBeUndefined();
    expect(waiting.waits).toEqual([["z"], ["y"]]);
    servers.start(servers.named("y")[1] as number);
    await vi.advanceTimersByTimeAsync(10);
    expect((await waiting.run).filter((name) => name.endsWith("__echo"))).toEqual([
      "mcp__z__echo",
      "mcp__y__echo",
    ]);
    expect(waiting.gaveUp).toEqual([]);
  });

  it("a server the reload is connecting again when the 30 s from the run's start are over is named as the run goes on without it", async () => {
    vi.useFakeTimers();
    const servers = slowStarts();
    const h = ctx.hub(ctx.home, { z: first, y: first }, { transportFor: servers.transportFor });
    await vi.advanceTimersByTimeAsync(10);
    servers.start(servers.named("y")[0] as number);
    await vi.advanceTimersByTimeAsync(10);
    const waiting = await waitingRun(h, ["z", "y"]);
    await vi.advanceTimersByTimeAsync(10_000);
    await h.reload({ z: changed, y: changed });
    await vi.advanceTimersByTimeAsync(10);
    servers.start(servers.named("z")[1] as number);
    await vi.advanceTimersByTimeAsync(19_970);
    expect(waiting.offered()).toBeUndefined();
    await vi.advanceTimersByTimeAsync(20);
    expect((await waiting.run).filter((name) => name.endsWith("__echo"))).toEqual(["mcp__z__echo"]);
    expect(waiting.gaveUp).toEqual([{ servers: ["y"], waitedMs: 30_000 }]);
  });
});

describe("a selected server that had failed when the run began", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("is not waited for when its backoff's retry starts during the wait: the run goes on once the first connect it waited for ends", async () => {
    vi.useFakeTimers();
    const servers = slowStarts();
    // f's first start ends at once, as a process exiting 1 does: its connect fails, and it waits out its
    // backoff (1 s) before the next.
    let fStarts = 0;
    const transportFor: TransportFor = (name, ...rest) => {
      if (name !== "f" || fStarts++ > 0) return servers.transportFor(name, ...rest);
      const [client, server] = InMemoryTransport.createLinkedPair();
      void server.close();
      return client;
    };
    const h = ctx.hub(ctx.home, { z: first, f: first }, { transportFor });
    await vi.advanceTimersByTimeAsync(10);
    expect(h.status().find((s) => s.name === "f")?.state).toBe("failed");
    const waiting = await waitingRun(h, ["z", "f"]);
    // f's retry begins (connecting, no tools) while the run waits for z's first connect.
    await vi.advanceTimersByTimeAsync(1500);
    expect(h.status().find((s) => s.name === "f")?.state).toBe("connecting");
    await vi.advanceTimersByTimeAsync(6500);
    servers.start(servers.named("z")[0] as number);
    await vi.advanceTimersByTimeAsync(10);
    // Offered z's tools as soon as z is connected, not 30 s after the run began.
    expect(waiting.offered()?.filter((name) => name.endsWith("__echo"))).toEqual(["mcp__z__echo"]);
    expect(waiting.waits).toEqual([["z"]]);
    // f, still connecting as the wait ends, is named with the time the run waited for z.
    expect(waiting.gaveUp).toEqual([{ servers: ["f"], waitedMs: 8000 }]);
  });

  it("is not waited for when a reload during the wait fixes its entry: the next run is offered its tools", async () => {
    vi.useFakeTimers();
    const servers = slowStarts();
    let fStarts = 0;
    const transportFor: TransportFor = (name, ...rest) => {
      if (name !== "f" || fStarts++ > 0) return servers.transportFor(name, ...rest);
      const [client, server] = InMemoryTransport.createLinkedPair();
      void server.close();
      return client;
    };
    const h = ctx.hub(ctx.home, { z: first, f: changed }, { transportFor });
    await vi.advanceTimersByTimeAsync(10);
    expect(h.status().find((s) => s.name === "f")?.state).toBe("failed");
    const waiting = await waitingRun(h, ["z", "f"]);
    await h.reload({ z: first, f: first });
    await vi.advanceTimersByTimeAsync(10);
    expect(h.status().find((s) => s.name === "f")?.state).toBe("connecting");
    servers.start(servers.named("z")[0] as number);
    await vi.advanceTimersByTimeAsync(10);
    expect(waiting.offered()?.filter((name) => name.endsWith("__echo"))).toEqual(["mcp__z__echo"]);
    expect(waiting.waits).toEqual([["z"]]);
    expect(waiting.gaveUp.map((g) => g.servers)).toEqual([["f"]]);
    servers.start(servers.named("f")[0] as number);
    await vi.advanceTimersByTimeAsync(10);
    const next = await waitingRun(h, ["z", "f"]);
    expect((await next.run).filter((name) => name.endsWith("__echo"))).toEqual([
      "mcp__z__echo",
      "mcp__f__echo",
    ]);
    expect(next.waits).toEqual([]);
  });
});

describe("a selected server making its first connect as the run began, which fails during the wait", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("is not waited for once its backoff's retry starts while the run waits for another server", async () => {
    vi.useFakeTimers();
    const servers = slowStarts();
    const h = ctx.hub(ctx.home, { z: first, f: first }, { transportFor: servers.transportFor });
    await vi.advanceTimersByTimeAsync(10);
    expect(servers.connects()).toBe(2);
    const waiting = await waitingRun(h, ["z", "f"]);
    // f's first connect fails 0.3 s into the wait; its retry begins (connecting, no tools) after its backoff.
    await vi.advanceTimersByTimeAsync(300);
    servers.close(servers.named("f")[0] as number);
    await vi.advanceTimersByTimeAsync(10);
    expect(h.status().find((s) => s.name === "f")?.state).toBe("failed");
    await vi.advanceTimersByTimeAsync(1500);
    expect(h.status().find((s) => s.name === "f")?.state).toBe("connecting");
    await vi.advanceTimersByTimeAsync(6190);
    servers.start(servers.named("z")[0] as number);
    await vi.advanceTimersByTimeAsync(10);
    // Offered z's tools as soon as z is connected (8 s), not 30 s after the run began.
    expect(waiting.offered()?.filter((name) => name.endsWith("__echo"))).toEqual(["mcp__z__echo"]);
    expect(waiting.waits).toEqual([["z", "f"]]);
    expect(waiting.gaveUp).toEqual([{ servers: ["f"], waitedMs: 8000 }]);
  });
});

describe("a selected server connected when the run began that goes down during the wait", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("is not waited for once the retry of a reload's failed new connect starts while the run waits for another server", async () => {
    vi.useFakeTimers();
    const servers = slowStarts();
    const h = ctx.hub(ctx.home, { z: first, y: first }, { transportFor: servers.transportFor });
    await vi.advanceTimersByTimeAsync(10);
    servers.start(servers.named("y")[0] as number);
    await vi.advanceTimersByTimeAsync(10);
    expect(h.tools().map((t) => t.server)).toContain("y");
    const waiting = await waitingRun(h, ["z", "y"]);
    await vi.advanceTimersByTimeAsync(100);
    await h.reload({ z: first, y: changed });
    await vi.advanceTimersByTimeAsync(200);
    // y's new connect fails (its process exits) 0.3 s in; its retry begins (connecting, no tools) after the
    // backoff, while the run still waits for z's first connect.
    servers.close(servers.named("y")[1] as number);
    await vi.advanceTimersByTimeAsync(10);
    expect(h.status().find((s) => s.name === "y")?.state).toBe("failed");
    await vi.advanceTimersByTimeAsync(1500);
    expect(h.status().find((s) => s.name === "y")?.state).toBe("connecting");
    await vi.advanceTimersByTimeAsync(6190);
    servers.start(servers.named("z")[0] as number);
    await vi.advanceTimersByTimeAsync(10);
    // Offered z's tools as soon as z is connected (8 s), not 30 s after the run began.
    expect(waiting.offered()?.filter((name) => name.endsWith("__echo"))).toEqual(["mcp__z__echo"]);
    expect(waiting.waits).toEqual([["z"]]);
    expect(waiting.gaveUp).toEqual([{ servers: ["y"], waitedMs: 8000 }]);
  });

  it("with no tools registered (a filter allowing none), is not waited for once it reconnects after a lost connection", async () => {
    vi.useFakeTimers();
    const servers = slowStarts();
    const none = entry({ ...IN_MEMORY_ENTRY, connect_timeout: 600, tools: { include: [] } });
    const h = ctx.hub(ctx.home, { z: first, y: none }, { transportFor: servers.transportFor });
    await vi.advanceTimersByTimeAsync(10);
    servers.start(servers.named("y")[0] as number);
    await vi.advanceTimersByTimeAsync(10);
    expect(h.status().find((s) => s.name === "y")?.state).toBe("connected");
    const waiting = await waitingRun(h, ["z", "y"]);
    // y's connection is lost 0.3 s in: it reconnects (connecting, no tools registered) while the run waits
    // for z's first connect.
    await vi.advanceTimersByTimeAsync(300);
    servers.close(servers.named("y")[0] as number);
    await vi.advanceTimersByTimeAsync(2000);
    expect(h.status().find((s) => s.name === "y")?.state).toBe("connecting");
    await vi.advanceTimersByTimeAsync(5700);
    servers.start(servers.named("z")[0] as number);
    await vi.advanceTimersByTimeAsync(10);
    expect(waiting.offered()?.filter((name) => name.endsWith("__echo"))).toEqual(["mcp__z__echo"]);
    expect(waiting.waits).toEqual([["z"]]);
    expect(waiting.gaveUp).toEqual([{ servers: ["y"], waitedMs: 8000 }]);
  });
});

describe("a selected server connected when the run began that goes down during the wait and is connected again", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("is waited for when a reload then changes its entry: only its own retry is not", async () => {
    vi.useFakeTimers();
    const servers = slowStarts();
    const h = ctx.hub(ctx.home, { z: first, y: first }, { transportFor: servers.transportFor });
    await vi.advanceTimersByTimeAsync(10);
    servers.start(servers.named("y")[0] as number);
    await vi.advanceTimersByTimeAsync(10);
    expect(h.tools().map((t) => t.server)).toContain("y");
    const waiting = await waitingRun(h, ["z", "y"]);
    // y's connection is lost 0.3 s in; its retry connects 2 s later.
    await vi.advanceTimersByTimeAsync(300);
    servers.close(servers.named("y")[0] as number);
    await vi.advanceTimersByTimeAsync(2000);
    expect(h.status().find((s) => s.name === "y")?.state).toBe("connecting");
    servers.start(servers.named("y")[1] as number);
    await vi.advanceTimersByTimeAsync(10);
    expect(h.status().find((s) => s.name === "y")?.state).toBe("connected");
    // A reload then changes y's entry: its new connect is waited for once z has connected.
    await h.reload({ z: first, y: changed });
    await vi.advanceTimersByTimeAsync(5000);
    servers.start(servers.named("z")[0] as number);
    await vi.advanceTimersByTimeAsync(1000);
    expect(waiting.offered()).toBeUndefined();
    expect(waiting.waits).toEqual([["z"], ["y"]]);
    servers.start(servers.named("y")[2] as number);
    await vi.advanceTimersByTimeAsync(10);
    expect((await waiting.run).filter((name) => name.endsWith("__echo"))).toEqual([
      "mcp__z__echo",
      "mcp__y__echo",
    ]);
    expect(waiting.gaveUp).toEqual([]);
  });
});

describe("many runs waiting for many servers' first connects", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  /** How many times the hub's status is built while `runs` runs wait for `count` servers connecting one by one. */
  async function statusBuilds(runs: number, count: number): Promise<number> {
    vi.useFakeTimers();
    const servers = slowStarts();
    const entries = Object.fromEntries(Array.from({ length: count }, (_, i) => [`s${i}`, first]));
    const h = ctx.hub(ctx.home, entries, { transportFor: servers.transportFor });
    await vi.advanceTimersByTimeAsync(10);
    expect(servers.connects()).toBe(count);
    const status = h.status.bind(h);
    let builds = 0;
    h.status = () => {
      builds++;
      return status();
    };
    const names = Object.keys(entries);
    const waiting = await Promise.all(Array.from({ length: runs }, () => waitingRun(h, names)));
    for (let n = 0; n < count; n++) {
      servers.start(n);
      await vi.advanceTimersByTimeAsync(10);
    }
    for (const run of waiting)
      expect((await run.run).filter((name) => name.endsWith("__echo"))).toHaveLength(count);
    h.status = status;
    return builds;
  }

  it("builds the hub's status a number of times linear in runs × servers, not in runs × servers²", async () => {
    const small = await statusBuilds(10, 8);
    const large = await statusBuilds(10, 16);
    // Twice the servers: about twice the builds (each status change is read once per run), not four times.
    expect(large).toBeLessThan(small * 2.5);
  });
});
