import { describe, expect, it } from "vitest";
import { createActor, fromPromise, SimulatedClock, waitFor } from "xstate";
import {
  backoffMs,
  type Connected,
  connectionState,
  gaugeState,
  type McpConnectionInput,
  mcpConnectionMachine,
  STABLE_CONNECTION_MS,
} from "../../../src/machines/mcpConnection.js";

interface Harness {
  connects: number;
  pings: number;
  closes: number;
  failPing: boolean;
  failConnect: boolean;
  hangConnect: boolean;
  /** When set, `close` waits for it (a process slow to exit). */
  holdClose?: Promise<void>;
  /** When set, `ping` waits for it before answering (a server slow to answer). */
  holdPing?: Promise<void>;
}

function start(overrides: Partial<McpConnectionInput> = {}, harness: Partial<Harness> = {}) {
  const h: Harness = {
    connects: 0,
    pings: 0,
    closes: 0,
    failPing: false,
    failConnect: false,
    hangConnect: false,
    ...harness,
  };
  const clock = new SimulatedClock();
  const machine = mcpConnectionMachine.provide({
    actors: {
      connect: fromPromise<Connected, { name: string; attempt: number }>(async () => {
        h.connects++;
        if (h.hangConnect) return new Promise<Connected>(() => undefined);
        if (h.failConnect) throw new Error("refused");
        return { session: { id: h.connects }, toolCount: 3 };
      }),
      ping: fromPromise<void, { session: unknown }>(async () => {
        h.pings++;
        await h.holdPing;
        if (h.failPing) throw new Error("no pong");
      }),
      close: fromPromise<void, { session: unknown }>(async () => {
        h.closes++;
        await h.holdClose;
      }),
    },
  });
  const input: McpConnectionInput = {
    name: "s",
    kind: "stdio",
    startIn: "connecting",
    connectTimeoutMs: 60_000,
    keepaliveMs: 0,
    idleMs: 0,
    maxLifetimeMs: 0,
    ...overrides,
  };
  const actor = createActor(machine, { input, clock });
  actor.start();
  const state = () => connectionState(actor.getSnapshot());
  const until = (s: string) => waitFor(actor, (snap) => connectionState(snap) === s);
  const tick = async (ms: number) => {
    clock.increment(ms);
    for (let i = 0; i < 5; i++) await Promise.resolve();
  };
  return { actor, h, clock, state, until, tick };
}

describe("mcpConnection machine (spec 3)", () => {
  it("enabled: false → skipped: no connection even when asked", async () => {
    const { actor, h, state, tick } = start({ startIn: "skipped" });
    actor.send({ type: "CONNECT" });
    actor.send({ type: "CALL_START" });
    await tick(1000);
    expect(state()).toBe("skipped");
    expect(h.connects).toBe(0);
  });

  it("lazy shows the cached tool count and connects on the first call", async () => {
    const { actor, h, state, until } = start({ startIn: "lazy", cachedToolCount: 7 });
    expect(state()).toBe("lazy");
    expect(actor.getSnapshot().context.toolCount).toBe(7);
    expect(h.connects).toBe(0);
    actor.send({ type: "CALL_START" });
    await until("connected");
    expect(h.connects).toBe(1);
    expect(actor.getSnapshot().context.toolCount).toBe(3);
  });

  it("connect_timeout: a connect that never answers fails after the timeout, not before", async () => {
    const { h, state, tick, until, actor } = start({ connectTimeoutMs: 60_000, startIn: "lazy" });
    h.hangConnect = true;
    actor.send({ type: "CONNECT" });
    await tick(59_999);
    expect(state()).toBe("connecting");
    await tick(1);
    await until("failed");
    expect(actor.getSnapshot().context.lastError).toBe("connect timed out after 60 s (connect_timeout)");
  });

  it("keepalive pings at the interval and reconnects with backoff when a ping fails", async () => {
    const { h, until, tick, actor } = start({ kind: "http", keepaliveMs: 180_000 });
    await until("connected");
    await tick(179_999);
    expect(h.pings).toBe(0);
    await tick(1);
    expect(h.pings).toBe(1);
    await tick(180_000);
    expect(h.pings).toBe(2);
    h.failPing = true;
    await tick(180_000);
    await until("reconnecting");
    expect(actor.getSnapshot().context.lastError).toMatch(/keepalive ping failed: no pong/);
    expect(h.closes).toBe(1);
    await tick(backoffMs(0));
    await until("connected");
    expect(h.connects).toBe(2);
  });

  it("no ping while a call is in flight (a server busy with it may not answer), and a ping a call overtook gives no verdict", async () => {
    const { h, until, tick, actor, state } = start({ kind: "stdio", keepaliveMs: 5_000 });
    await until("connected");
    actor.send({ type: "CALL_START" });
    await tick(5_000);
    await tick(5_000);
    expect(h.pings).toBe(0);
    actor.send({ type: "CALL_END" });
    await tick(5_000);
    expect(h.pings).toBe(1);

    // The next ping waits for its answer; a call starts meanwhile and the ping then fails (timed out).
    let answer = () => {};
    h.holdPing = new Promise<void>((resolve) => {
      answer = resolve;
    });
    h.failPing = true;
    await tick(5_000);
    expect(h.pings).toBe(2);
    actor.send({ type: "CALL_START" });
    answer();
    await tick(0);
    expect(state()).toBe("connected");
    expect(h.closes).toBe(0);
    // Once idle again, a failing ping reconnects as before.
    delete h.holdPing;
    actor.send({ type: "CALL_END" });
    await tick(5_000);
    await until("reconnecting");
    expect(actor.getSnapshot().context.lastError).toMatch(/keepalive ping failed: no pong/);
  });

  it("SSE pings while a call is in flight (traffic on the event stream), and a ping failing under a call gives no verdict", async () => {
    const { h, until, tick, actor, state } = start({ kind: "sse", keepaliveMs: 5_000 });
    await until("connected");
    actor.send({ type: "CALL_START" });
    await tick(5_000);
    await tick(5_000);
    expect(h.pings).toBe(2);
    h.failPing = true;
    await tick(5_000);
    expect(h.pings).toBe(3);
    expect(state()).toBe("connected");
    expect(h.closes).toBe(0);
    // Once idle, a failing ping reconnects as on the other transports.
    actor.send({ type: "CALL_END" });
    await tick(5_000);
    await until("reconnecting");
    expect(actor.getSnapshot().context.lastError).toMatch(/keepalive ping failed: no pong/);
  });

  it("Streamable HTTP sends no ping while a call is in flight", async () => {
    const { h, until, tick, actor } = start({ kind: "http", keepaliveMs: 5_000 });
    await until("connected");
    actor.send({ type: "CALL_START" });
    await tick(5_000);
    await tick(5_000);
    expect(h.pings).toBe(0);
    actor.send({ type: "CALL_END" });
    await tick(5_000);
    expect(h.pings).toBe(1);
  });

  it("stdio without keepalive_interval never pings", async () => {
    const { h, until, tick } = start({ kind: "stdio", keepaliveMs: 0 });
    await until("connected");
    await tick(3_600_000);
    expect(h.pings).toBe(0);
  });

  it("idle_timeout_seconds recycles an idle stdio process, never during a call, and the next call respawns", async () => {
    const { actor, h, until, tick, state } = start({ idleMs: 10_000 });
    await until("connected");
    actor.send({ type: "CALL_START" });
    await tick(60_000);
    expect(state()).toBe("connected");
    actor.send({ type: "CALL_END" });
    await tick(9_999);
    expect(state()).toBe("connected");
    await tick(1);
    await until("recycled");
    expect(h.closes).toBe(1);
    actor.send({ type: "CALL_START" });
    await until("connected");
    expect(h.connects).toBe(2);
  });

  it("a call that arrives while the process is being recycled connects once it is gone, not never", async () => {
    let finishClose: () => void = () => undefined;
    const { actor, h, until, tick, state } = start({ idleMs: 10_000 });
    await until("connected");
    h.holdClose = new Promise<void>((r) => {
      finishClose = r;
    });
    await tick(10_000);
    expect(actor.getSnapshot().matches("recycling")).toBe(true);
    // What the hub sends for a call: CALL_START, then CONNECT since the status is not connected.
    actor.send({ type: "CALL_START" });
    actor.send({ type: "CONNECT" });
    finishClose();
    await until("connected");
    expect(state()).toBe("connected");
    expect(h.connects).toBe(2);
  });

  it("max_lifetime_seconds recycles by age, deferred until the in-flight call ends", async () => {
    const { actor, h, until, tick, state } = start({ maxLifetimeMs: 30_000 });
    await until("connected");
    actor.send({ type: "CALL_START" });
    await tick(30_000);
    expect(state()).toBe("connected");
    expect(h.closes).toBe(0);
    actor.send({ type: "CALL_END" });
    await until("recycled");
    expect(h.closes).toBe(1);
  });

  it("max_lifetime_seconds recycles an idle process when the age is reached", async () => {
    const { until, tick, state } = start({ maxLifetimeMs: 30_000 });
    await until("connected");
    await tick(29_999);
    expect(state()).toBe("connected");
    await tick(1);
    await until("recycled");
  });

  it("0 disables recycling, and HTTP servers are never recycled", async () => {
    const stdio = start({ idleMs: 0, maxLifetimeMs: 0 });
    await stdio.until("connected");
    await stdio.tick(86_400_000);
    expect(stdio.state()).toBe("connected");
    const http = start({ kind: "http", idleMs: 1_000, maxLifetimeMs: 1_000 });
    await http.until("connected");
    await http.tick(10_000);
    expect(http.state()).toBe("connected");
  });

  it("a failed connect records the error and retries with exponential backoff", async () => {
    const { h, until, tick, actor } = start({}, { failConnect: true });
    await until("failed");
    expect(actor.getSnapshot().context.lastError).toBe("refused");
    expect(h.connects).toBe(1);
    await tick(backoffMs(1) - 1);
    expect(h.connects).toBe(1);
    await tick(1);
    await until("failed");
    expect(h.connects).toBe(2);
    await tick(backoffMs(2));
    expect(h.connects).toBe(3);
    expect(backoffMs(2)).toBe(2 * backoffMs(1));
    h.failConnect = false;
    actor.send({ type: "CONNECT" });
    await until("connected");
  });

  it("a lazy server whose connect for a call failed is not retried in the background: the next call (or a reload) tries again", async () => {
    const { h, until, tick, actor, state } = start({ startIn: "lazy" }, { failConnect: true });
    // What the hub sends for a call: CALL_START, then CONNECT since the status is not connected.
    actor.send({ type: "CALL_START" });
    actor.send({ type: "CONNECT" });
    await until("failed");
    actor.send({ type: "CALL_END" });
    expect(actor.getSnapshot().context.lastError).toBe("refused");
    await tick(10 * 60_000);
    expect(h.connects).toBe(1);
    expect(state()).toBe("failed");
    h.failConnect = false;
    actor.send({ type: "CONNECT" });
    await until("connected");
    expect(h.connects).toBe(2);
  });

  it("a recycled process whose respawn for a call failed waits for the next call; once connected, a lost one reconnects in the background again", async () => {
    const { h, until, tick, actor, state } = start({ idleMs: 10_000 });
    await until("connected");
    await tick(10_000);
    await until("recycled");
    h.failConnect = true;
    actor.send({ type: "CALL_START" });
    actor.send({ type: "CONNECT" });
    await until("failed");
    actor.send({ type: "CALL_END" });
    await tick(10 * 60_000);
    expect(h.connects).toBe(2);
    h.failConnect = false;
    actor.send({ type: "CONNECT" });
    await until("connected");
    // In use again: a loss and a failing reconnect are retried with the backoff, as for any connected server.
    h.failConnect = true;
    actor.send({ type: "SESSION_LOST", reason: "exited" });
    await waitFor(actor, (snapshot) => snapshot.matches("backoff"));
    await tick(60_000);
    await until("failed");
    const tries = h.connects;
    await tick(300_000);
    expect(h.connects).toBeGreaterThan(tries);
    expect(state()).toBe("failed");
  });

  it("LOGIN_NEEDED (a call found the saved login unusable): failed at once with the reason, the session closed, retried on the backoff", async () => {
    const { actor, h, state, tick } = start({ kind: "http" });
    await tick(0);
    expect(state()).toBe("connected");
    let release: () => void = () => undefined;
    h.holdClose = new Promise<void>((r) => {
      release = r;
    });
    h.failConnect = true;
    actor.send({ type: "LOGIN_NEEDED", reason: "s: token refresh failed — run `svc mcp login s`" });
    // Failed while its session closes: never shown connected or reconnecting in between.
    expect(state()).toBe("failed");
    expect(gaugeState(actor.getSnapshot())).toBe("failed");
    expect(actor.getSnapshot().context.lastError).toBe("s: token refresh failed — run `svc mcp login s`");
    release();
    await tick(0);
    expect(h.closes).toBe(1);
    expect(state()).toBe("failed");
    expect(actor.getSnapshot().context.session).toBeUndefined();
    expect(h.connects).toBe(1);
    await tick(backoffMs(1));
    expect(h.connects).toBe(2);
    // A login done meanwhile is picked up at the next retry.
    h.failConnect = false;
    await tick(backoffMs(2));
    expect(h.connects).toBe(3);
    expect(state()).toBe("connected");
  });

  it("a CONNECT while LOGIN_NEEDED closes the session (a reload after a login) connects once it is closed", async () => {
    const { actor, h, state, tick } = start({ kind: "http" });
    await tick(0);
    let release: () => void = () => undefined;
    h.holdClose = new Promise<void>((r) => {
      release = r;
    });
    actor.send({ type: "LOGIN_NEEDED", reason: "s: not logged in" });
    actor.send({ type: "CONNECT" });
    release();
    await tick(0);
    expect(h.connects).toBe(2);
    expect(state()).toBe("connected");
  });

  it("a lost session with immediate: true reconnects without waiting", async () => {
    const { actor, h, until } = start({ kind: "http" });
    await until("connected");
    actor.send({ type: "SESSION_LOST", reason: "session expired", immediate: true });
    await until("connected");
    expect(h.connects).toBe(2);
    expect(h.closes).toBe(1);
  });

  it("a call cut off by a process exit seen first (its own loss comes while the session closes) reconnects at once", async () => {
    const { actor, h, state, tick } = start();
    await tick(0);
    expect(state()).toBe("connected");
    let release: () => void = () => undefined;
    h.holdClose = new Promise<void>((r) => {
      release = r;
    });
    // stdio: the transport's close (the process exited) is reported before the call's rejection.
    actor.send({ type: "SESSION_LOST", reason: "the connection closed: the server process exited (code 1)" });
    actor.send({ type: "SESSION_LOST", reason: "the connection closed", immediate: true });
    release();
    await tick(0);
    expect(h.connects).toBe(2);
    expect(state()).toBe("connected");
    expect(actor.getSnapshot().context.lastError).toBeUndefined();
  });

  it("a loss without a call cut off still waits out the backoff, and a CONNECT while the session closes (a call, a reload) is not lost", async () => {
    const { actor, h, state, tick } = start();
    await tick(0);
    actor.send({ type: "SESSION_LOST", reason: "the connection closed" });
    await tick(0);
    expect(state()).toBe("reconnecting");
    await tick(backoffMs(1) - 1);
    expect(h.connects).toBe(1);
    await tick(1);
    expect(h.connects).toBe(2);
    let release: () => void = () => undefined;
    h.holdClose = new Promise<void>((r) => {
      release = r;
    });
    await tick(STABLE_CONNECTION_MS);
    actor.send({ type: "SESSION_LOST", reason: "the connection closed" });
    actor.send({ type: "CONNECT" });
    release();
    await tick(0);
    expect(h.connects).toBe(3);
    expect(state()).toBe("connected");
  });

  it("a connection lost right after connecting keeps growing the backoff; one that stayed up starts it over", async () => {
    const { actor, h, state, tick } = start();
    await tick(0);
    expect(state()).toBe("connected");
    // A server that crashes 200 ms after each handshake: 1 s, 2 s, 4 s — not a respawn every second.
    for (const delay of [1000, 2000, 4000]) {
      await tick(200);
      actor.send({ type: "SESSION_LOST", reason: "the server process exited (code 7)" });
      await tick(0);
      const before = h.connects;
      await tick(delay - 1);
      expect(h.connects).toBe(before);
      await tick(1);
      expect(h.connects).toBe(before + 1);
      expect(state()).toBe("connected");
    }
    await tick(STABLE_CONNECTION_MS);
    actor.send({ type: "SESSION_LOST", reason: "the connection closed" });
    await tick(0);
    const before = h.connects;
    await tick(backoffMs(1));
    expect(h.connects).toBe(before + 1);
  });

  it("svc_mcp_servers: a server that crashes right after each connect stays reconnecting, not connected at each reconnect, until a connection stays up 30 s", async () => {
    const { actor, state, tick, until } = start({ kind: "stdio" });
    const gauge = () => gaugeState(actor.getSnapshot());
    await until("connected");
    expect(gauge()).toBe("connected");
    // Each connection exits 5 s after its handshake: the backoff grows, and each reconnect is connected for 5 s.
    for (let attempt = 1; attempt <= 4; attempt++) {
      await tick(5_000);
      actor.send({ type: "SESSION_LOST", reason: "the server process exited (code 1)" });
      await tick(0);
      expect(gauge()).toBe("reconnecting");
      await tick(backoffMs(attempt));
      await until("connected");
      expect(state()).toBe("connected");
      // A scrape now (svc mcp list shows connected): still reconnecting, so an alert's `for:` does not start over.
      expect(gauge()).toBe("reconnecting");
    }
    // One that stays up as long as the backoff takes to start over is connected again.
    await tick(STABLE_CONNECTION_MS - 1);
    expect(gauge()).toBe("reconnecting");
    await tick(1);
    expect(gauge()).toBe("connected");
    expect(actor.getSnapshot().context.attempt).toBe(0);
  });

  it("svc_mcp_servers: a retry under way after a failed connect still counts as failed, and one after a lost connection as reconnecting, until the connection it makes has stayed up 30 s", async () => {
    const { actor, h, state, tick, until } = start(
      { kind: "http", connectTimeoutMs: 60_000 },
      { hangConnect: true },
    );
    const gauge = () => gaugeState(actor.getSnapshot());
    // The first connect is connecting, nothing failed yet.
    expect(gauge()).toBe("connecting");
    // A server that never answers (a firewall dropping the packets): each try lasts connect_timeout.
    await tick(60_000);
    expect(state()).toBe("failed");
    expect(gauge()).toBe("failed");
    await tick(backoffMs(1));
    expect(h.connects).toBe(2);
    expect(state()).toBe("connecting");
    // A scrape during the retry: still failed, so an alert on failed servers does not reset at each retry.
    expect(gauge()).toBe("failed");
    h.hangConnect = false;
    actor.send({ type: "CONNECT" });
    await tick(60_000);
    await until("failed");
    await tick(backoffMs(2));
    await until("connected");
    // Connected after failed connects: still counted failed until the connection has stayed up 30 s.
    expect(gauge()).toBe("failed");
    await tick(STABLE_CONNECTION_MS - 1);
    expect(gauge()).toBe("failed");
    await tick(1);
    expect(gauge()).toBe("connected");
    // A lost connection: reconnecting through its backoff and through the connect that follows it.
    h.hangConnect = true;
    actor.send({ type: "SESSION_LOST", reason: "the connection closed" });
    await tick(0);
    expect(gauge()).toBe("reconnecting");
    await tick(backoffMs(3));
    expect(state()).toBe("connecting");
    expect(gauge()).toBe("reconnecting");
    await tick(60_000);
    expect(gauge()).toBe("failed");
  });
});
