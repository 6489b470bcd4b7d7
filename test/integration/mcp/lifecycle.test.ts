import { cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it, vi } from "vitest";
import { startSystem } from "../../../src/actors/system.js";
import { silentLogger } from "../../../src/io/log.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { alive, signalProcess } from "../../helpers/process.js";
import { entry, makeHub, ownHubs, stdioEntry, text, useHubs } from "./harness.js";

const CHANGING_LIST_FIXTURE = resolve(import.meta.dirname, "../../fixtures/mcp/changing-list-server.mjs");

const ctx = useHubs();
const hub = ctx.hub;

/**
 * The schema cache a connect of `stdioEntry("legacy", { lazy: true })` writes, made once for the file in a
 * home of its own (one server process) and copied into the test's home by the tests that start from it: the
 * cache is keyed by the entry, not the home. The first test of "lazy servers" writes and checks it itself.
 */
let lazyCache: Promise<TempHome> | undefined;
async function withLazyCache(home: TempHome): Promise<void> {
  lazyCache ??= (async () => {
    const made = tempHome();
    const writer = makeHub(made, { fx: stdioEntry("legacy", { lazy: true }) });
    try {
      expect((await writer.settled("fx")).state).toBe("connected");
    } finally {
      await writer.stop();
    }
    return made;
  })();
  const dir = join((await lazyCache).dir, "mcp-cache");
  cpSync(dir, join(home.dir, "mcp-cache"), {
    recursive: true,
    filter: (src) => !src.endsWith("status.json"),
  });
}
afterAll(async () => (await lazyCache)?.cleanup());

/** The lazy cache with a tool "gone" the server listed when it was written (since removed in an update). */
async function withGoneInCache(home: TempHome): Promise<void> {
  await withLazyCache(home);
  const dir = join(home.dir, "mcp-cache");
  const file = join(dir, readdirSync(dir).find((f) => f !== "status.json") as string);
  const cached = JSON.parse(readFileSync(file, "utf8"));
  cached.tools.push({ name: "gone", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } });
  writeFileSync(file, JSON.stringify(cached));
}

describe("lazy servers and the schema cache (spec 2.1 lazy, 3)", () => {
  it("caches schemas on connect; lazy: true registers from the cache and spawns only on the first call", async () => {
    const lazyEntry = stdioEntry("legacy", { lazy: true });
    const first = hub(ctx.home, { fx: lazyEntry });
    // No cache yet: a lazy server connects eagerly.
    expect((await first.settled("fx")).state).toBe("connected");
    const liveCount = first.toolsOf("fx").length;
    await first.stop();
    expect(readdirSync(join(ctx.home.dir, "mcp-cache")).filter((f) => f !== "status.json")).toHaveLength(1);

    const second = hub(ctx.home, { fx: lazyEntry });
    const status = second.status()[0];
    expect(status).toMatchObject({ state: "lazy", lazy: true, cached: true });
    expect(status?.toolCount).toBe(liveCount);
    expect(second.tools().map((t) => t.name)).toContain("mcp__fx__echo");
    expect(text(await second.call("fx", "echo", { text: "woke" }))).toBe("woke");
    expect(second.status()[0]?.state).toBe("connected");
  });

  it("a live connect made before lazy: true was set is the earlier connect a lazy start needs", async () => {
    const eager = hub(ctx.home, { fx: stdioEntry("legacy") });
    expect((await eager.settled("fx")).state).toBe("connected");
    await eager.stop();
    const lazy = hub(ctx.home, { fx: stdioEntry("legacy", { lazy: true }) });
    expect(lazy.status()[0]).toMatchObject({ state: "lazy", cached: true });
    expect(lazy.tools().map((t) => t.name)).toContain("mcp__fx__echo");
  });

  it("a cached tool the live server no longer lists is not called once the first call connects", async () => {
    const lazyEntry = stdioEntry("legacy", { lazy: true });
    await withGoneInCache(ctx.home);
    const second = hub(ctx.home, { fx: lazyEntry });
    expect(second.tools().map((t) => t.name)).toContain("mcp__fx__gone");
    await expect(second.callRegistered("mcp__fx__gone", {})).rejects.toThrow(
      'mcp_servers.fx no longer offers "gone" (the server, connected for this call, does not list it: its tools changed since the listing it was registered from); the tool was not run',
    );
    expect(second.status()[0]?.state).toBe("connected");
    expect(second.tools().map((t) => t.name)).not.toContain("mcp__fx__gone");
  });

  it("a cached tool the live server no longer lists, called behind another call of the same turn, says the same", async () => {
    await withGoneInCache(ctx.home);
    const lazy = hub(ctx.home, { fx: stdioEntry("legacy", { lazy: true }) });
    // Both called at once: the echo's connect replaces the listing while "gone" waits its turn.
    const [echo, gone] = await Promise.allSettled([
      lazy.callRegistered("mcp__fx__echo", { text: "first" }),
      lazy.callRegistered("mcp__fx__gone", {}),
    ]);
    expect(echo.status).toBe("fulfilled");
    expect((gone as PromiseRejectedResult).reason.message).toBe(
      'mcp_servers.fx no longer offers "gone" (the server, connected for this call, does not list it: its tools changed since the listing it was registered from); the tool was not run',
    );
  });

  it("a changed entry makes the cache stale: eager connect", async () => {
    await withLazyCache(ctx.home);
    // The entry as cached registers from the cache: only the change makes it stale.
    expect(hub(ctx.home, { fx: stdioEntry("legacy", { lazy: true }) }).status()[0]?.state).toBe("lazy");
    const b = hub(ctx.home, { fx: stdioEntry("legacy", { lazy: true, timeout: 12 }) });
    expect(b.status()[0]?.state).toBe("connecting");
    expect((await b.settled("fx")).state).toBe("connected");
  });
});

// The three describes below run at once: each test waits on its process's real recycle (idle and age
// limits, a process lingering after its stdin closed), in a home and with hubs of its own.
describe.concurrent("recycling a real stdio process (spec 3)", () => {
  it("a call made while an idle process is still exiting waits for it and runs on a new process", async ({
    onTestFinished,
  }) => {
    const h = ownHubs(onTestFinished).hub({
      fx: stdioEntry("legacy", { idle_timeout_seconds: 0.3 }, ["--linger-ms", "1800"]),
    });
    const firstPid = text(await h.call("fx", "pid", {}));
    await vi.waitFor(() => expect(h.status()[0]?.state).toBe("recycled"), { timeout: 5000, interval: 10 });
    // The old process has not exited yet (it lingers 1.8 s after its stdin closes: long enough that a loaded
    // machine cannot let it end before this check, short of the 2 s after which svc sends SIGTERM).
    expect(alive(Number(firstPid))).toBe(true);
    const secondPid = text(await h.call("fx", "pid", {}));
    expect(secondPid).not.toBe(firstPid);
    expect(h.status()[0]?.state).toBe("connected");
    // Checked: the stop need not wait out the new process's linger too (its stdin closed, it would end
    // 1.8 s later). Once the stop has begun, the process is killed.
    const stopped = h.stop();
    signalProcess(Number(secondPid), "SIGKILL");
    await stopped;
  });
});

describe.concurrent("recycling a real stdio process (spec 3), and its log", () => {
  it("idle_timeout_seconds recycles the process, the log says which key and that the next call starts it again, and the next call respawns it; then age after the call it waited for", async ({
    onTestFinished,
  }) => {
    const log = captureLogger();
    const recycled = () => log.messages().filter((m) => m.includes("recycled"));
    const { hub } = ownHubs(onTestFinished);
    const idle = hub(
      { fx: stdioEntry("legacy", { lifecycle: { idle_timeout_seconds: 0.3 } }) },
      { logger: log.logger },
    );
    const firstPid = text(await idle.call("fx", "pid", {}));
    await vi.waitFor(
      () => {
        expect(idle.status()[0]?.state).toBe("recycled");
        expect(alive(Number(firstPid))).toBe(false);
      },
      { timeout: 5000, interval: 20 },
    );
    await vi.waitFor(
      () =>
        expect(recycled()).toEqual([
          "[mcp] fx: recycled, its process stopped: idle for idle_timeout_seconds (0.3 s); the next call starts it again",
        ]),
      { timeout: 10_000 },
    );
    const secondPid = text(await idle.call("fx", "pid", {}));
    expect(secondPid).not.toBe(firstPid);
    const aged = hub({ ax: stdioEntry("legacy", { max_lifetime_seconds: 0.3 }) }, { logger: log.logger });
    // The call outlives the age limit: the process is recycled once it has answered, and said so once.
    expect(text(await aged.call("ax", "slow", { ms: 800 }))).toBe("slept 800");
    await vi.waitFor(() => expect(aged.status()[0]?.state).toBe("recycled"), { timeout: 5000, interval: 20 });
    expect(recycled().filter((m) => m.includes("ax:"))).toEqual([
      "[mcp] ax: recycled, its process stopped: it reached max_lifetime_seconds (0.3 s); the next call starts it again",
    ]);
  });
});

describe.concurrent("max_lifetime_seconds with calls that overlap (supports_parallel_tool_calls)", () => {
  it("a call made once the process is past its age waits for the recycle and runs on a new process; the call in flight is not broken", async ({
    onTestFinished,
  }) => {
    // Told when the age limit passed while a call was in flight (the recycle waits for it).
    let aged = false;
    const h = ownHubs(onTestFinished).hub(
      { fx: stdioEntry("legacy", { max_lifetime_seconds: 0.3, supports_parallel_tool_calls: true }) },
      {
        inspect: (event) => {
          const context = (event as { snapshot?: { context?: { recyclePending?: boolean } } }).snapshot
            ?.context;
          if (context?.recyclePending === true) aged = true;
        },
      },
    );
    const firstPid = text(await h.call("fx", "pid", {}));
    const order: string[] = [];
    const long = h.call("fx", "slow", { ms: 1500 }).then((r) => {
      order.push("slow");
      return text(r);
    });
    await vi.waitFor(() => expect(aged).toBe(true), { timeout: 5000, interval: 10 });
    const next = h.call("fx", "pid", {}).then((r) => {
      order.push("pid");
      return text(r);
    });
    expect(await long).toBe("slept 1500");
    const nextPid = await next;
    expect(nextPid).not.toBe(firstPid);
    expect(order).toEqual(["slow", "pid"]);
    await vi.waitFor(() => expect(alive(Number(firstPid))).toBe(false), { timeout: 10_000 });
  });
});

// auto with a legacy server (it stays legacy): asserted of each server of "reload: reconnects only servers
// whose entry changed", which starts three.
describe("protocol eras (spec 9)", () => {
  it("auto: falls back to server/discover when the server rejects initialize as modern-only", async () => {
    const h = hub(ctx.home, { m: stdioEntry("modern-only") });
    expect(await h.settled("m")).toMatchObject({ state: "connected", era: "stateless" });
    expect(text(await h.call("m", "echo", { text: "stateless" }))).toBe("stateless");
  });

  it("stateless: probes server/discover first (a server without initialize at all)", async () => {
    const h = hub(ctx.home, { d: stdioEntry("discover-only", { protocol: "stateless" }) });
    expect(await h.settled("d")).toMatchObject({ state: "connected", era: "stateless" });
    expect(text(await h.call("d", "add", { a: 20, b: 22 }))).toBe("42");
  });

  it("stateless: the legacy retry comes when the probe goes unanswered, within connect_timeout", async () => {
    // The probe waits half the connect's time: waiting all of it timed the connect out before the retry. The
    // hub's timers (the probe's, the connect_timeout) are on a fake clock: its 5 s pass once the server has
    // said it dropped the probe, and the retry's node start has the other 5 s however slow the machine, as
    // its handshake's own wait does not move.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const h = hub(ctx.home, {
        q: stdioEntry("legacy", { protocol: "stateless", connect_timeout: 10 }, ["--silent-before-init"]),
      });
      // Polled on real time: vi.waitFor would advance the fake clock at each poll, the probe's wait with it.
      const dropped = "WARNING: Received request before initialization was complete: server/discover";
      for (let polls = 0; !h.stderrSoFar("q").includes(dropped); polls++) {
        expect(polls, h.stderrSoFar("q").join("\n")).toBeLessThan(500);
        await sleep(20);
      }
      // The fixture's starts (one "fixture legacy ready pid N" line each): the probe's, then the retry's.
      const starts = () => h.stderrSoFar("q").filter((line) => line.startsWith("fixture legacy ready pid"));
      expect(starts()).toHaveLength(1);
      // Not yet at 4.9 s: a probe given up by then would have its process closed and the retry's started
      // well within the second of real time given here (about 0.2 s), the legacy handshake too ("connecting"
      // either way, so the state alone cannot tell).
      vi.advanceTimersByTime(4900);
      await sleep(1000);
      expect(starts()).toHaveLength(1);
      expect(h.status()[0]).toMatchObject({ state: "connecting" });
      expect(h.status()[0]?.era).toBeUndefined();
      // At 5 s the probe is given up and the legacy handshake is tried, in a process started anew.
      vi.advanceTimersByTime(100);
      await vi.waitFor(() => expect(starts()).toHaveLength(2), { timeout: 10_000, interval: 20 });
      expect(await h.settled("q")).toMatchObject({ state: "connected", era: "legacy" });
      expect(text(await h.call("q", "echo", { text: "retried" }))).toBe("retried");
    } finally {
      vi.useRealTimers();
    }
  });

  it("stateless: one legacy retry when the probe fails", async () => {
    const h = hub(ctx.home, { l: stdioEntry("legacy", { protocol: "stateless" }) });
    expect(await h.settled("l")).toMatchObject({ state: "connected", era: "legacy" });
  });

  it("legacy: handshake only, no fallback; the error says to set protocol: auto", async () => {
    const h = hub(ctx.home, { m: stdioEntry("modern-only", { protocol: "legacy" }) });
    const status = await h.settled("m");
    expect(status.state).toBe("failed");
    expect(status.lastError).toMatch(
      /^mcp_servers\.m: MCP error -32022: .* — the server refused the initialize handshake as a 2026-07-28 \(stateless\) server does, and protocol: legacy never tries server\/discover: set protocol: auto \(or stateless\)$/,
    );
  });
});

// Server-initiated requests (sampling, elicitation) and naming: test/unit/mcp/serverRequests.test.ts (in memory).

describe("tools/list_changed", () => {
  it("a burst of notifications (one per tool added) re-lists at most twice and ends with the full list", async () => {
    const h = hub(ctx.home, { fx: stdioEntry("legacy", {}, ["--count-lists"]) });
    await h.settled("fx");
    expect(text(await h.call("fx", "list-count", {}))).toBe("1");
    await h.call("fx", "add-tools", { count: 10 });
    await vi.waitFor(() => expect(h.tools().map((t) => t.name)).toContain("mcp__fx__burst10"), {
      timeout: 10_000,
      interval: 20,
    });
    await new Promise((r) => setTimeout(r, 200));
    expect(h.tools().filter((t) => t.original.startsWith("burst"))).toHaveLength(10);
    expect(Number(text(await h.call("fx", "list-count", {})))).toBeLessThanOrEqual(3);
  });

  it("a notification sent while the connect lists the tools lists them again before it is connected", async () => {
    const h = hub(ctx.home, {
      cl: entry({ command: process.execPath, args: [CHANGING_LIST_FIXTURE] }),
    });
    expect(await h.settled("cl")).toMatchObject({ state: "connected", toolCount: 2 });
    expect(h.tools().map((t) => t.name)).toEqual(["mcp__cl__first", "mcp__cl__second"]);
    expect(text(await h.call("cl", "second", {}))).toBe("second after 2 listings");
  });
});

describe("reload", () => {
  it("reconnects only servers whose entry changed (protocol auto: a legacy server stays legacy, spec 9)", async () => {
    const same = stdioEntry();
    const h = hub(ctx.home, { keep: same, change: stdioEntry(), drop: stdioEntry() });
    for (const s of await Promise.all(["keep", "change", "drop"].map((n) => h.settled(n))))
      expect(s).toMatchObject({ state: "connected", era: "legacy" });
    const pidKeep = text(await h.call("keep", "pid", {}));
    const pidChange = text(await h.call("change", "pid", {}));
    const summary = await h.reload({
      keep: same,
      change: stdioEntry("legacy", { timeout: 99 }),
      add: stdioEntry(),
    });
    expect(summary).toEqual({
      added: ["add"],
      removed: ["drop"],
      changed: ["change"],
      disabled: [],
      enabled: [],
      unchanged: ["keep"],
      retried: [],
      started: [],
    });
    expect(text(await h.call("keep", "pid", {}))).toBe(pidKeep);
    expect(text(await h.call("change", "pid", {}))).not.toBe(pidChange);
    expect(h.status().map((s) => s.name)).toEqual(["keep", "change", "add"]);
    expect(existsSync(join(ctx.home.dir, "mcp-cache"))).toBe(true);
  });

  it("a changed lazy server that was never called is started by the reload, not reconnected", async () => {
    await withLazyCache(ctx.home);
    const h = hub(ctx.home, { fx: stdioEntry("legacy", { lazy: true }) });
    expect(h.status()[0]?.state).toBe("lazy");
    // A new timeout makes the cache stale: the reload connects it at once.
    const summary = await h.reload({ fx: stdioEntry("legacy", { lazy: true, timeout: 12 }) });
    expect(summary).toMatchObject({ changed: ["fx"], started: ["fx"] });
    expect((await h.settled("fx")).state).toBe("connected");
    // Connected now: a change of it is a reconnect again.
    const again = await h.reload({ fx: stdioEntry("legacy", { lazy: true, timeout: 13 }) });
    expect(again).toMatchObject({ changed: ["fx"], started: [] });
  });

  it("two reloads in a row (quick SIGHUPs) run one after the other: the later mapping is the one in effect", async () => {
    // Under the gateway's actor system, as in `svc gateway run`: each server is the child `mcp:<name>`.
    const system = startSystem({ logger: silentLogger() });
    try {
      const h = hub(ctx.home, { x: stdioEntry() }, { system });
      await h.settled("x");
      // The second starts while the first still stops the old process.
      const first = h.reload({ x: stdioEntry("legacy", { timeout: 98 }) });
      const second = h.reload({ x: stdioEntry("legacy", { enabled: false }) });
      expect((await first).changed).toEqual(["x"]);
      expect((await second).disabled).toEqual(["x"]);
      expect(h.status().map((s) => [s.name, s.state])).toEqual([["x", "skipped"]]);
      await h.stop();
    } finally {
      system.shutdown();
    }
  });

  it("quick reloads (ten SIGHUPs) behind one still running: only the last waiting mapping is applied, the superseded ones start nothing", async () => {
    // Slow to exit once its stdin closes: the first reload, which changes it, is still stopping it when the
    // others come. (They come in the same tick as the first, which counts as running from its call on, so
    // the linger need not cover a slow machine's delay: 0.3 s, not 1.5, paid at its stop and at the end.)
    const slow = (timeout?: number) =>
      stdioEntry("legacy", timeout === undefined ? {} : { timeout }, ["--linger-ms", "300"]);
    const h = hub(ctx.home, { x: slow() });
    await h.settled("x");
    const first = h.reload({ x: slow(98), s0: stdioEntry() });
    const later = Array.from({ length: 9 }, (_, i) => h.reload({ x: slow(98), [`s${i + 1}`]: stdioEntry() }));
    expect(await first).toMatchObject({ added: ["s0"], changed: ["x"] });
    // Each waiting mapping is replaced by the next: one reload applies the last, and answers for all of them.
    for (const summary of await Promise.all(later))
      expect(summary).toMatchObject({ added: ["s9"], removed: ["s0"], changed: [], unchanged: ["x"] });
    expect(h.status().map((s) => s.name)).toEqual(["x", "s9"]);
  });
});
