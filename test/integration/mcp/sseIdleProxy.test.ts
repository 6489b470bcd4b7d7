import type { ServerResponse } from "node:http";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { afterEach, describe, expect, it, vi } from "vitest";
import { SimulatedClock } from "xstate";
import { type IdleCuttingProxy, startIdleCuttingProxy } from "../../fixtures/mcp/idleCuttingProxy.js";
import { buildServer } from "../../fixtures/mcp/server.mjs";
import { entry, text, useHubs, useLoopbackHttp } from "./harness.js";

const ctx = useHubs();
const serve = useLoopbackHttp();
const proxies: IdleCuttingProxy[] = [];
afterEach(async () => {
  await Promise.all(proxies.splice(0).map((p) => p.close()));
});

/**
 * An SSE server built with the SDK whose tool `held` answers when the test lets it: a call that lasts as
 * long as the test wants, not as long as a wall-clock wait. `held` is not read-only, so a call whose
 * answer is lost is not replayed (it fails as outcome_uncertain).
 */
async function heldToolServer() {
  let release: () => void = () => undefined;
  const released = new Promise<void>((r) => {
    release = r;
  });
  let entered: () => void = () => undefined;
  const running = new Promise<void>((r) => {
    entered = r;
  });
  const counts = { calls: 0, pings: 0 };
  const sessions = new Map<string, SSEServerTransport>();
  const port = await serve(async (req, res: ServerResponse) => {
    if (req.method === "GET") {
      const server = buildServer("legacy");
      server.registerTool("held", {}, async () => {
        counts.calls++;
        entered();
        await released;
        return { content: [{ type: "text", text: "done at last" }] };
      });
      const transport = new SSEServerTransport("/messages", res);
      sessions.set(transport.sessionId, transport);
      await server.connect(transport);
      return;
    }
    const sid = new URL(req.url ?? "", "http://x").searchParams.get("sessionId") ?? "";
    const transport = sessions.get(sid);
    if (transport === undefined) {
      res.writeHead(404).end("unknown session");
      return;
    }
    let body = "";
    for await (const chunk of req) body += chunk;
    const message = JSON.parse(body) as { method?: string };
    if (message.method === "ping") counts.pings++;
    await transport.handlePostMessage(req, res, message);
  });
  return { origin: `http://127.0.0.1:${port}`, counts, running, release };
}

/** The simulated clock, counting the keepalive waits (5 s here; the proxy's idle timers are 7 s) armed on it. */
class KeepaliveWatchedClock extends SimulatedClock {
  keepalivesArmed = 0;
  override setTimeout(fn: (...args: unknown[]) => void, timeout: number): number {
    if (timeout === 5_000) this.keepalivesArmed += 1;
    return super.setTimeout(fn, timeout);
  }
}

/**
 * A legacy SSE server behind a proxy that ends event streams idle for a while (nginx's proxy_read_timeout):
 * the call's answer comes on the event stream, silent while the tool runs, so without traffic on it the
 * proxy cut it under any call longer than its limit, answer and all.
 */
describe("an SSE server behind a proxy that cuts idle streams (simulated clock)", () => {
  it("a call that outlasts the proxy's idle limit gets its answer: keepalive pings go on during it", async () => {
    const upstream = await heldToolServer();
    const clock = new KeepaliveWatchedClock();
    // Idle limit 7 s, pings every 5 s: each ping's answer comes before the stream has been quiet 7 s.
    const proxy = await startIdleCuttingProxy(upstream.origin, 7_000, clock);
    proxies.push(proxy);
    const h = ctx.hub(
      ctx.home,
      { slowly: entry({ url: `${proxy.origin}/sse`, transport: "sse", keepalive_interval: 5 }) },
      { clock },
    );
    expect((await h.settled("slowly")).state).toBe("connected");

    const call = h.call("slowly", "held", {});
    await upstream.running;
    const quietSince = proxy.streamBytes();
    const armedBefore = clock.keepalivesArmed;
    clock.increment(5_000);
    // The ping sent while the call runs is answered on the event stream, through the proxy.
    await vi.waitFor(() => expect(proxy.streamBytes()).toBeGreaterThan(quietSince), {
      timeout: 10_000,
      interval: 20,
    });
    expect(upstream.counts.pings).toBe(1);
    // The next ping's wait is armed once the client has read the answer (the proxy passing it on is
    // not enough): the clock moved before that would arm it 5 s past the move.
    await vi.waitFor(() => expect(clock.keepalivesArmed).toBeGreaterThan(armedBefore), {
      timeout: 10_000,
      interval: 20,
    });
    // 10 s into the call: past the proxy's limit since the call started, not since the ping's answer.
    const pingedAt = proxy.streamBytes();
    clock.increment(5_000);
    await vi.waitFor(() => expect(proxy.streamBytes()).toBeGreaterThan(pingedAt), {
      timeout: 10_000,
      interval: 20,
    });
    upstream.release();
    expect(text(await call)).toBe("done at last");
    expect(proxy.cut()).toBe(0);
    expect(upstream.counts.calls).toBe(1);
    expect(h.status()[0]?.state).toBe("connected");
  });
});
