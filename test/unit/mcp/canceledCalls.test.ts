import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { describe, expect, it, vi } from "vitest";
import type { TransportFor } from "../../../src/io/mcp/connect.js";
import { buildServer } from "../../fixtures/mcp/server.mjs";
import { IN_MEMORY_ENTRY, inMemoryServers } from "../../helpers/inMemoryMcp.js";
import { entry, text, useHubs } from "../../integration/mcp/harness.js";

/**
 * A call whose run ends under it (the run's timeout, a stop): the SDK reports any abort as a request
 * timeout, which read as the server's own `timeout` having passed.
 */

const ctx = useHubs();
const transportFor = inMemoryServers(() => buildServer());
const failure = (call: Promise<unknown>) =>
  call.then(
    () => "answered",
    (err: Error) => err.message,
  );

/** `call`'s outcome as soon as it settles (undefined until then), without waiting for it. */
function watch(call: Promise<unknown>): { readonly outcome: string | undefined } {
  const state: { outcome: string | undefined } = { outcome: undefined };
  void failure(call).then((outcome) => {
    state.outcome = outcome;
  });
  return state;
}

describe("a tool call the run gave up on", () => {
  it("is reported as canceled by the run, not as the server's timeout, and a call queued behind it is not sent", async () => {
    const h = ctx.hub(ctx.home, { fx: entry({ ...IN_MEMORY_ENTRY }) }, { transportFor });
    expect(text(await h.call("fx", "echo", { text: "warm" }))).toBe("warm");
    const run = new AbortController();
    const slow = failure(h.call("fx", "slow", { ms: 60_000 }, run.signal));
    // One call at a time per server: this one waits for "slow".
    const queued = failure(h.call("fx", "echo", { text: "late" }, run.signal));
    // A few turns of the event loop (no timer): the request is on its way to the server.
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    run.abort(new DOMException("the run took too long", "TimeoutError"));
    expect(await slow).toBe(
      'mcp_servers.fx: "slow" was canceled: the run ended before it answered; it may or may not have run',
    );
    expect(await queued).toBe(
      `mcp_servers.fx: "echo" was not called: the run ended while it waited for the server's earlier call`,
    );
    // The server is still usable for the next run.
    expect(text(await h.call("fx", "echo", { text: "next" }))).toBe("next");
  });

  it("a utility tool (read_resource) is canceled at the server too, and frees the server for the next call", async () => {
    let canceled = 0;
    const build = () => {
      const server = new McpServer({ name: "slow-resources", version: "1.0.0" });
      // Answers only when svc cancels the read (no timer: the test never waits out a timeout).
      server.registerResource("big", "file:///big", {}, (_uri, extra) => {
        return new Promise((resolve) => {
          extra.signal.addEventListener("abort", () => {
            canceled += 1;
            resolve({ contents: [] });
          });
        });
      });
      server.registerTool("hi", {}, () => ({ content: [{ type: "text", text: "hi" }] }));
      return server;
    };
    const h = ctx.hub(
      ctx.home,
      // timeout: 60 only bounds the test should the cancel not reach the read (the waits below are 10 s).
      { res: entry({ ...IN_MEMORY_ENTRY, tools: { resources: true }, timeout: 60 }) },
      { transportFor: inMemoryServers(build) },
    );
    expect(text(await h.call("res", "hi", {}))).toBe("hi");
    const run = new AbortController();
    const read = failure(h.call("res", "read_resource", { uri: "file:///big" }, run.signal));
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    run.abort(new DOMException("the run took too long", "TimeoutError"));
    // The server hears of it at once (notifications/cancelled), not when the call's own timeout passes.
    await vi.waitFor(() => expect(canceled).toBe(1), { timeout: 10_000, interval: 5 });
    expect(await read).toBe(
      'mcp_servers.res: "read_resource" was canceled: the run ended before it answered; it may or may not have run',
    );
    // The next call is not stuck behind the read (one call at a time per server) until its timeout.
    expect(text(await h.call("res", "hi", {}))).toBe("hi");
  });

  it("a call waiting for another run's call to the same server is given up when its own run ends, not when that call does", async () => {
    const h = ctx.hub(ctx.home, { fx: entry({ ...IN_MEMORY_ENTRY }) }, { transportFor });
    expect(text(await h.call("fx", "echo", { text: "warm" }))).toBe("warm");
    const other = new AbortController();
    // Another run's long call holds the server (one call at a time); its run goes on.
    const long = failure(h.call("fx", "slow", { ms: 60_000 }, other.signal));
    const run = new AbortController();
    const queued = watch(h.call("fx", "echo", { text: "late" }, run.signal));
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    run.abort(new DOMException("the run took too long", "TimeoutError"));
    await vi.waitFor(() => expect(queued.outcome).toBeDefined(), { timeout: 10_000, interval: 5 });
    expect(queued.outcome).toBe(
      `mcp_servers.fx: "echo" was not called: the run ended while it waited for the server's earlier call`,
    );
    other.abort();
    expect(await long).toContain("was canceled");
  });

  it("a call waiting for its server's connect is given up when the run ends, not at connect_timeout", async () => {
    // A server that never answers the handshake (a process waiting for a login, a hung bridge).
    const silent = () => InMemoryTransport.createLinkedPair()[0];
    const h = ctx.hub(
      ctx.home,
      { hung: entry({ ...IN_MEMORY_ENTRY, connect_timeout: 600 }) },
      { transportFor: silent },
    );
    const run = new AbortController();
    const call = watch(h.call("hung", "echo", { text: "x" }, run.signal));
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(call.outcome).toBeUndefined();
    run.abort(new DOMException("the run took too long", "TimeoutError"));
    await vi.waitFor(() => expect(call.outcome).toBeDefined(), { timeout: 10_000, interval: 5 });
    expect(call.outcome).toBe(
      'mcp_servers.hung: "echo" was not called: the run ended while the server was connecting',
    );
  });
});

describe("the end of a run whose calls were answered", () => {
  it("sends the server no notifications/cancelled for them (the SDK leaves its listener on the run's signal)", async () => {
    const received: string[] = [];
    const recording: TransportFor = () => {
      const [client, server] = InMemoryTransport.createLinkedPair();
      const built = buildServer();
      void built.connect(server).then(() => {
        const handle = server.onmessage;
        server.onmessage = (message, extra) => {
          if ("method" in message) received.push(message.method);
          handle?.(message, extra);
        };
      });
      return client;
    };
    const h = ctx.hub(
      ctx.home,
      { fx: entry({ ...IN_MEMORY_ENTRY, tools: { resources: true } }) },
      { transportFor: recording },
    );
    expect(text(await h.call("fx", "echo", { text: "warm" }))).toBe("warm");
    const run = new AbortController();
    expect(text(await h.call("fx", "echo", { text: "one" }, run.signal))).toBe("one");
    expect(text(await h.call("fx", "add", { a: 1, b: 2 }, run.signal))).toBe("3");
    expect(received.filter((m) => m === "tools/call")).toHaveLength(3);
    run.abort(new DOMException("the run ended", "AbortError"));
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(received).not.toContain("notifications/cancelled");
  });
});
