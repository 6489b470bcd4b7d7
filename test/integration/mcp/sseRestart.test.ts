import { afterEach, describe, expect, it, vi } from "vitest";
import { captureLogger } from "../../fakes/logCapture.js";
import { type FixtureHttp, startSse } from "../../fixtures/mcp/httpServers.js";
import { entry, text, useHubs } from "./harness.js";

const servers: FixtureHttp[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
const ctx = useHubs();

/**
 * An SSE server that goes away and comes back: its stream is the session, so losing it loses the
 * session. The hub must show the server as not connected while it is down and connect again with a
 * full `initialize` handshake — not keep posting into a fresh server-side session that was never
 * initialized (which servers such as the Python SDK's refuse forever).
 */
describe("SSE (transport: sse) server restart", () => {
  it("status leaves connected when the stream drops; after the restart the hub re-initializes and calls work", {
    timeout: 30_000,
  }, async () => {
    const first = await startSse();
    const port = Number(new URL(first.url).port);
    const h = ctx.hub(ctx.home, { old: entry({ url: first.url, transport: "sse", connect_timeout: 5 }) });
    expect((await h.settled("old")).state).toBe("connected");
    await first.close();
    await vi.waitFor(() => expect(h.status()[0]?.state).not.toBe("connected"), {
      timeout: 10_000,
      interval: 20,
    });

    const second = await startSse({ port });
    servers.push(second);
    // Some time passes with the server back up (an EventSource left alone would have reconnected by now).
    await new Promise((r) => setTimeout(r, 3500));
    expect(text(await h.call("old", "echo", { text: "again" }))).toBe("again");
    expect(text(await h.call("old", "write-note", { text: "x" }))).toMatch(/^noted \d+$/);
    expect(h.status()[0]?.state).toBe("connected");
  });
});

describe("SSE (transport: sse) stream dropped by the server", () => {
  it('is logged saying the server ended it, not the EventSource\'s "SSE error: undefined"', async () => {
    const log = captureLogger();
    const server = await startSse();
    const h = ctx.hub(
      ctx.home,
      { ev: entry({ url: server.url, transport: "sse", connect_timeout: 5 }) },
      { logger: log.logger },
    );
    expect((await h.settled("ev")).state).toBe("connected");
    await server.close();
    await vi.waitFor(
      () => expect(log.messages().find((m) => m.includes("the SSE stream closed"))).toBeDefined(),
      { timeout: 10_000, interval: 20 },
    );
    const line = log.messages().find((m) => m.includes("the SSE stream closed"));
    expect(line).toBe(
      "[mcp] mcp_servers.ev: the SSE stream closed (the server ended the stream) — reconnecting",
    );
  });
});
