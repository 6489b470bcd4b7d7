import { afterEach, describe, expect, it, vi } from "vitest";
import { SimulatedClock } from "xstate";
import { type FixtureHttp, startStreamableHttp } from "../../fixtures/mcp/httpServers.js";
import { signalProcess } from "../../helpers/process.js";
import { entry, stdioEntry, text, useHubs } from "./harness.js";

// Registered after useHubs: hooks run in reverse order, so frozen processes die before the hubs stop.
const ctx = useHubs();
const servers: FixtureHttp[] = [];
const stopped: number[] = [];
afterEach(async () => {
  for (const pid of stopped.splice(0)) signalProcess(pid, "SIGKILL");
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
const settle = () => new Promise((r) => setTimeout(r, 100));

/**
 * Spec 2.1 keepalive_interval: "Liveness ping cadence, floored at 5. HTTP default 180. Stdio:
 * disabled when omitted, enabled when a value is set." A value below 5 — 0 included — pings every 5 s.
 */
describe("keepalive_interval below the floor (simulated clock)", () => {
  it("HTTP: keepalive_interval 0 pings every 5 s", async () => {
    const s = await startStreamableHttp();
    servers.push(s);
    const clock = new SimulatedClock();
    const h = ctx.hub(ctx.home, { web: entry({ url: s.url, keepalive_interval: 0 }) }, { clock });
    await h.settled("web");
    const posts = () => s.requests.filter((r) => r.startsWith("POST")).length;
    const before = posts();
    clock.increment(4_999);
    await settle();
    expect(posts()).toBe(before);
    clock.increment(1);
    await vi.waitFor(() => expect(posts()).toBe(before + 1), { timeout: 10_000, interval: 20 });
  });

  it("stdio: keepalive_interval 0 is a value, so pings run (every 5 s): a frozen process is detected", async () => {
    const clock = new SimulatedClock();
    const h = ctx.hub(
      ctx.home,
      // connect_timeout also bounds the ping: long enough for a start under load, short for the test.
      { fx: stdioEntry("legacy", { keepalive_interval: 0, connect_timeout: 3 }) },
      { clock },
    );
    const pid = Number(text(await h.call("fx", "pid", {})));
    stopped.push(pid);
    signalProcess(pid, "SIGSTOP");
    clock.increment(5_000);
    await vi.waitFor(
      () => {
        const status = h.status()[0];
        expect(status?.state).toBe("reconnecting");
        // Named with the wait and the key that bounds it, not the SDK's "MCP error -32001: Request timed out".
        expect(status?.lastError).toMatch(/keepalive ping failed: no answer within 3 s \(connect_timeout\)$/);
      },
      { timeout: 10_000, interval: 20 },
    );
  });

  it("stdio without keepalive_interval sends no pings", async () => {
    const clock = new SimulatedClock();
    const h = ctx.hub(
      ctx.home,
      {
        off: stdioEntry("legacy", {}, ["--count-pings"]),
        // The same with keepalive_interval 0: shows that a ping due at the increment is counted.
        on: stdioEntry("legacy", { keepalive_interval: 0 }, ["--count-pings"]),
      },
      { clock },
    );
    await Promise.all([h.settled("off"), h.settled("on")]);
    clock.increment(600_000);
    // A ping due at the increment is on the server's stdin before the call that asks for the count.
    expect(text(await h.call("on", "ping-count", {}))).toBe("1");
    expect(text(await h.call("off", "ping-count", {}))).toBe("0");
    expect(h.status().map((s) => s.state)).toEqual(["connected", "connected"]);
  });
});
