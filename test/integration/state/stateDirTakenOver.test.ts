import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it, vi } from "vitest";
import { sleepOn } from "../../../src/clock.js";
import { type Gateway, startGateway } from "../../../src/gateway/index.js";
import { createLogger } from "../../../src/io/log.js";
import { LOCK_FILE } from "../../../src/io/state/journal/dirLock.js";
import { SEGMENT_CHECK_MS } from "../../../src/io/state/journal/journal.js";
import { stateDir } from "../../../src/state/gatewayState.js";
import { oneJobStore } from "../../helpers/cronJobs.js";
import { type FakeClock, fakeClock } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { sample, scrapedSample } from "../../helpers/metrics.js";
import {
  agentsAlive,
  closeGate,
  deliver,
  openGate,
  ranLines,
  SECRET,
  statusOf,
  writeConfig,
} from "./killHelpers.js";

/**
 * docs/durability.md, "One gateway per state directory": a gateway whose state directory another gateway took
 * over (this one paused past the 15 s a gateway of another PID namespace waits, or LOCK replaced by hand)
 * says so once at ERROR and answers 503 to every request from then on: that gateway replayed the journal and
 * runs what it holds, and nothing this one would accept could be kept.
 */

const homes: TempHome[] = [];
const running: Gateway[] = [];
afterEach(async () => {
  for (const gateway of running.splice(0)) await gateway.stop();
  for (const home of homes.splice(0)) home.cleanup();
});

/** A home whose `pr` route queues a run per event and `grp` coalesces its events by `number` (60 s window). */
function newHome(slots = 4): TempHome {
  const home = tempHome();
  homes.push(home);
  writeConfig(
    home,
    {
      pr: { secret: SECRET, prompt: "pr {number}" },
      grp: {
        secret: SECRET,
        prompt: "grp {number}",
        coalesce: { key: "number", window_seconds: 60, max_wait_seconds: 600 },
      },
    },
    slots,
  );
  return home;
}

/**
 * A gateway on `clock` in `home`, in this process: the journal's look at its lock and segment, and the
 * coalescing windows, run on it; with `everything`, the cron schedule and the stop's drain too.
 */
async function startOnClock(
  home: TempHome,
  clock: FakeClock,
  everything = false,
  onTakenOver?: () => void,
): Promise<Gateway> {
  const gateway = await startGateway({
    ...(onTakenOver === undefined ? {} : { onTakenOver }),
    home: home.dir,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home.dir, SVC_HOME: home.dir },
    port: 0,
    now: clock.now,
    timers: clock,
    ...(everything ? { clock: { ...clock, sleep: sleepOn(clock) } } : {}),
    logger: createLogger({ file: join(home.dir, "gateway.log"), fileFormat: "json", stdout: false }),
    drainTimeoutMs: 100,
  });
  running.push(gateway);
  return gateway;
}

/** Another gateway (of another PID namespace) takes the state directory over, as after this one's pause. */
const takeOver = (home: TempHome) =>
  writeFileSync(join(stateDir(home.dir), LOCK_FILE), "1 123 abc pid:[4026599999]\n");

const LEVELS = { info: 30, warn: 40, error: 50 } as const;

/** The log's lines at `level` (JSON lines) whose message contains `text`. */
function logged(home: TempHome, level: keyof typeof LEVELS, text: string): string[] {
  return readFileSync(join(home.dir, "gateway.log"), "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as { level: number; msg: string })
    .filter((line) => line.level === LEVELS[level] && line.msg.includes(text))
    .map((line) => line.msg);
}

describe("a gateway whose state directory another gateway took over", { timeout: 60_000 }, () => {
  it("answers 503 to a signed POST from its next look on (LOCK written by hand, as a gateway of another PID namespace's), says so once at ERROR, tells onTakenOver (svc gateway run stops touching gateway.pid), and /metrics shows svc_state_available 0", async () => {
    const home = newHome();
    openGate(home);
    const clock = fakeClock();
    const onTakenOver = vi.fn();
    const port = (await startOnClock(home, clock, false, onTakenOver)).port;
    expect(await statusOf(deliver(port, "pr", "before"))).toBe(202);
    expect(onTakenOver).not.toHaveBeenCalled();

    takeOver(home);
    clock.advance(SEGMENT_CHECK_MS);
    expect(logged(home, "error", "no longer names this gateway")).toHaveLength(1);
    expect(onTakenOver).toHaveBeenCalledTimes(1);
    for (const id of ["after-1", "after-2"]) expect(await statusOf(deliver(port, "pr", id))).toBe(503);
    expect(await scrapedSample(`http://127.0.0.1:${port}`, "svc_state_available")).toBe(0);
    // Later looks say nothing more, and nothing is accepted.
    clock.advance(5 * SEGMENT_CHECK_MS);
    expect(await statusOf(deliver(port, "pr", "after-3"))).toBe(503);
    expect(logged(home, "error", "no longer names this gateway")).toHaveLength(1);
    expect(onTakenOver).toHaveBeenCalledTimes(1);
    expect(readFileSync(join(stateDir(home.dir), LOCK_FILE), "utf8")).toBe("1 123 abc pid:[4026599999]\n");
    closeGate(home);
  });

  it("starts no run from then on: one queued behind a running run, and a coalescing group's fired after the takeover, are the other gateway's", async () => {
    const home = newHome(1);
    closeGate(home);
    const clock = fakeClock();
    const port = (await startOnClock(home, clock)).port;
    expect(await statusOf(deliver(port, "pr", "a"))).toBe(202);
    await vi.waitFor(() => expect(agentsAlive(home)).toBe(1), { timeout: 10_000, interval: 20 });
    expect(await statusOf(deliver(port, "pr", "b"))).toBe(202);
    expect(await statusOf(deliver(port, "grp", "g"))).toBe(202);

    takeOver(home);
    clock.advance(SEGMENT_CHECK_MS);
    expect(logged(home, "error", "no longer names this gateway")).toHaveLength(1);
    // The group's window ends: it fires, its run queued behind b.
    clock.advance(60_000);
    expect(logged(home, "info", "grp: coalesced group dispatched")).toHaveLength(1);
    openGate(home);
    // Run a ends; b and the group's run are taken from the queue and not started.
    await vi.waitFor(
      async () => {
        const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
        expect(sample(text, "svc_runs_waiting")).toBe(0);
        expect(sample(text, "svc_runs_active")).toBe(0);
        expect(ranLines(home).map(([id]) => id)).toContain("a");
      },
      { timeout: 15_000, interval: 50 },
    );
    expect(ranLines(home)).toEqual([["a", "pr a"]]);
  });

  it("saves no unfinished run to webhook-pending-runs.json at its stop (the next start would run them again), and says so", async () => {
    const home = newHome(1);
    closeGate(home);
    const clock = fakeClock();
    const gateway = await startOnClock(home, clock);
    for (const id of ["a", "b"]) expect(await statusOf(deliver(gateway.port, "pr", id))).toBe(202);
    await vi.waitFor(() => expect(agentsAlive(home)).toBe(1), { timeout: 10_000, interval: 20 });

    takeOver(home);
    clock.advance(SEGMENT_CHECK_MS);
    expect(logged(home, "error", "no longer names this gateway")).toHaveLength(1);
    // Run a is stopped past the drain, b taken back from the queue: neither is saved.
    await gateway.stop();
    expect(existsSync(join(home.dir, "webhook-pending-runs.json"))).toBe(false);
    expect(logged(home, "info", "unfinished run(s) not saved")).toEqual([
      `[state] 2 unfinished run(s) not saved to ${join(home.dir, "webhook-pending-runs.json")}: another gateway took the state directory over and runs them from the journal it replayed`,
    ]);
    expect(ranLines(home)).toEqual([]);
  });

  it("stops its cron schedule: a job that comes due afterwards is left to the other gateway's (its next_run untouched here)", async () => {
    const home = newHome();
    openGate(home);
    const clock = fakeClock();
    const due = new Date(clock.now() + 30_000).toISOString();
    home.write("cron/jobs.json", oneJobStore({ name: "nightly", prompt: "cron-job", next_run: due }));
    const gateway = await startOnClock(home, clock, true);

    takeOver(home);
    clock.advance(SEGMENT_CHECK_MS);
    expect(logged(home, "error", "no longer names this gateway")).toHaveLength(1);
    // A minute of ticks (each given a moment to read the store), past the job's due time.
    for (let tick = 0; tick < 60; tick++) {
      clock.advance(1000);
      await sleep(10);
    }
    const jobs = JSON.parse(readFileSync(join(home.dir, "cron", "jobs.json"), "utf8")) as {
      jobs: { j1: { next_run: string; last_run?: unknown } };
    };
    expect(jobs.jobs.j1.next_run).toBe(due);
    expect(jobs.jobs.j1.last_run).toBeUndefined();
    expect(ranLines(home)).toEqual([]);
    // Its stop's drain sleeps on the clock.
    let stopped = false;
    const stopping = gateway.stop().then(() => {
      stopped = true;
    });
    await vi.waitFor(
      () => {
        if (!stopped) clock.advance(100);
        expect(stopped).toBe(true);
      },
      { timeout: 15_000, interval: 10 },
    );
    await stopping;
  });
});
