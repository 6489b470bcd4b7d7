import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { SimulatedClock } from "xstate";
import { STABLE_CONNECTION_MS } from "../../../src/machines/mcpConnection.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { pidInFile, signalProcess } from "../../helpers/process.js";
import { entry, stdioEntry, useHubs } from "./harness.js";

const ctx = useHubs();

/** pino's level names by number, as the gateway log writes them. */
const LEVELS: Record<number, string> = { 20: "debug", 30: "info", 40: "warn", 50: "error" };

/**
 * A real SDK stdio server that answers the handshake and exits right after it, at every start (when the test
 * signals it, so that no crash waits on the machine, nor comes before the test has seen the connect): its crashes
 * are one failure streak until a connection stays up 30 s (as the backoff and svc_mcp_servers count it), so
 * the log says the loss at WARN and the connect after it at INFO once, and the repeats at DEBUG, with the
 * streak's real count; the connection that stays up ends the streak, said at INFO with the count, and the
 * next crash is warned about again. The backoff and the 30 s run on a simulated clock.
 */
describe("a server that crashes right after each handshake", { timeout: 60_000 }, () => {
  it("is logged once per failure streak, not a WARN and an INFO at every crash", async () => {
    const log = captureLogger();
    const clock = new SimulatedClock();
    const pidFile = join(ctx.home.dir, "loop.pid");
    // The connection machine's own state (the status shows its backoff as reconnecting too).
    let machineState: unknown;
    const h = ctx.hub(
      ctx.home,
      { loop: stdioEntry("legacy", {}, ["--crash-on-signal", pidFile]) },
      {
        logger: log.logger,
        clock,
        inspect: (event) => {
          const value = (event as { snapshot?: { value?: unknown } }).snapshot?.value;
          if (event.type === "@xstate.snapshot" && value !== undefined) machineState = value;
        },
      },
    );
    const lines = () =>
      log
        .lines()
        .map((line) => JSON.parse(line) as { level: number; msg: string })
        .filter((l) => l.msg.startsWith("[mcp] ") && l.msg.includes("loop"))
        .map((l) => [LEVELS[l.level] ?? String(l.level), l.msg] as const);
    const connects = () => lines().filter(([, msg]) => msg.includes(": connected")).length;
    const wait = { timeout: 10_000, interval: 10 };
    /** Crashes the connected server's process, waits for the backoff, then ends it: the retry connects. */
    const retry = async () => {
      const before = connects();
      // The connected process wrote its pid before its handshake (a retry's overwrites the last one's).
      signalProcess(await pidInFile(pidFile), "SIGUSR2");
      await vi.waitFor(() => expect(machineState).toBe("backoff"), wait);
      clock.increment(300_000);
      await vi.waitFor(() => expect(connects()).toBe(before + 1), wait);
    };

    await vi.waitFor(() => expect(connects()).toBe(1), wait);
    for (let crash = 1; crash <= 3; crash++) await retry();
    // The third retry's connection stays up 30 s (its process exits only when signalled).
    await vi.waitFor(() => expect(h.status()[0]?.state).toBe("connected"), wait);
    expect(h.gaugeStates()).toEqual(["reconnecting"]);
    clock.increment(STABLE_CONNECTION_MS);
    expect(h.gaugeStates()).toEqual(["connected"]);
    await retry();

    const said = lines();
    const lost = said[1]?.[1] as string;
    expect(lost).toMatch(/^\[mcp\] mcp_servers\.loop: .*exited \(code 7\).* — reconnecting$/);
    expect(said).toEqual([
      ["info", "[mcp] loop: connected"],
      ["warn", lost],
      ["info", "[mcp] loop: connected again after 1 failure"],
      ["debug", lost],
      ["debug", "[mcp] loop: connected again after 2 failures"],
      ["debug", lost],
      ["debug", "[mcp] loop: connected again after 3 failures"],
      ["info", "[mcp] loop: connected again after 3 failures (up 30 s since its last connect)"],
      // A new streak: its first crash is warned about again.
      ["warn", lost],
      ["info", "[mcp] loop: connected again after 1 failure"],
    ]);
  });
});

/**
 * A reload that retries a crash-looping server beside one that never answers: the hub keeps how each retry
 * first ended (what `svc mcp reload` prints), the loop's connect as connected although it is reconnecting
 * again by the time the other one's connect_timeout has passed, and the other's as failed with why.
 */
describe("a reload's retry of a crash-looping server and a hung one", { timeout: 60_000 }, () => {
  it("keeps each retry's first outcome, whatever the server does after", async () => {
    const clock = new SimulatedClock();
    const pidFile = join(ctx.home.dir, "loop.pid");
    /** Crashes loop's connected process (its pid written before its handshake, each start overwriting it). */
    const crash = async () => signalProcess(await pidInFile(pidFile), "SIGUSR2");
    const servers = {
      loop: stdioEntry("legacy", {}, ["--crash-on-signal", pidFile]),
      hang: entry({ command: process.execPath, args: ["-e", "process.stdin.resume()"], connect_timeout: 5 }),
    };
    const h = ctx.hub(ctx.home, servers, { clock });
    const state = (name: string) => h.status().find((s) => s.name === name)?.state;
    const wait = { timeout: 10_000, interval: 10 };
    await vi.waitFor(() => expect(state("loop")).toBe("connected"), wait);
    // hang's connect_timeout passes before loop's process exits (the next 30 s would end loop's streak).
    clock.increment(5000);
    await vi.waitFor(() => expect(state("hang")).toBe("failed"), wait);
    await crash();
    await vi.waitFor(() => expect(state("loop")).toBe("reconnecting"), wait);

    const summary = await h.reload(servers);
    expect(summary.retried).toEqual(["loop", "hang"]);
    expect(h.reloadConnectOutcomes(["loop", "hang"])).toEqual({
      loop: { state: "connecting" },
      hang: { state: "connecting" },
    });
    await vi.waitFor(() => expect(h.reloadConnectOutcomes(["loop"]).loop?.state).toBe("connected"), wait);
    // loop's process exits again, and its retry waits out the backoff, while hang's connect waits.
    await crash();
    await vi.waitFor(() => expect(state("loop")).toBe("reconnecting"), wait);
    clock.increment(5000);
    await vi.waitFor(() => expect(state("hang")).not.toBe("connecting"), wait);
    expect(h.reloadConnectOutcomes(["loop", "hang"])).toEqual({
      loop: { state: "connected" },
      hang: {
        state: "failed",
        lastError: expect.stringMatching(/^connect timed out after 5 s \(connect_timeout\)/),
      },
    });
    // A server the reload did not wait for has none.
    expect(h.reloadConnectOutcomes(["other"])).toEqual({});
  });
});
