import { describe, expect, it } from "vitest";
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
});
