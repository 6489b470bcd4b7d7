import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createActor } from "xstate";
import { createCronScheduler } from "../../../src/actors/cron.js";
import { drainRuns, enqueueRun, RUNS_PER_SIGNAL, runsMachine } from "../../../src/actors/runs.js";
import { silentLogger } from "../../../src/io/log.js";
import { type CronJob, cronStore } from "../../../src/io/stores/cronStore.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { runEvent } from "../../helpers/runEvent.js";

/**
 * A gateway runs for weeks, so a signal that lives as long as it must not keep anything per run. Each
 * `AbortSignal.any` records a WeakRef of the signal it makes in every source signal (a composite's
 * sources too), and Node 20 never drops it: a long-lived signal handed to each run, which the run (the
 * model runner, MCP calls, deliveries) composes with its own timeouts, grew by an entry per composition
 * for the life of the gateway. These count the entries Node keeps.
 */

/** How many signals Node holds as made from `signal` (its internal set of dependants). */
function dependants(signal: AbortSignal): number {
  const symbol = Object.getOwnPropertySymbols(signal).find((s) => s.description === "kDependantSignals");
  // Node's own set (a primordials SafeSet), absent until a first signal is made from `signal`.
  if (symbol === undefined) return 0;
  const set = (signal as unknown as Record<symbol, { size: number } | undefined>)[symbol];
  return set?.size ?? 0;
}

/** What the model runner does with the run's signal: its own timeout, composed with it. */
const composeAsARunDoes = (signal: AbortSignal) => AbortSignal.any([signal, new AbortController().signal]);

let home: TempHome | undefined;
afterEach(() => home?.cleanup());

describe("signals over a long run", () => {
  it("the run queue's stop signal keeps nothing per run: 300 runs leave only the slots' own entries", async () => {
    const actor = createActor(runsMachine, {
      input: {
        maxConcurrent: 2,
        logger: silentLogger(),
        execute: async (_run, signal) => void composeAsARunDoes(signal),
      },
    }).start();
    const { queue } = actor.getSnapshot().context;
    // The two slots each compose the queue's stop with their own (one entry each, for the slot's life).
    expect(dependants(queue.stopSignal)).toBe(2);
    for (let i = 0; i < 300; i++) enqueueRun(actor, runEvent(`d-${i}`));
    expect(await drainRuns(actor, 10_000)).toBe(true);
    expect(dependants(queue.stopSignal)).toBe(2);
    actor.stop();
  });

  it("the signal the runs are given is replaced every RUNS_PER_SIGNAL runs, so what it keeps is bounded", async () => {
    const given: AbortSignal[] = [];
    const actor = createActor(runsMachine, {
      input: {
        maxConcurrent: 1,
        logger: silentLogger(),
        execute: async (_run, signal) => {
          given.push(signal);
          composeAsARunDoes(signal);
        },
      },
    }).start();
    const runs = RUNS_PER_SIGNAL * 2 + 10;
    for (let i = 0; i < runs; i++) enqueueRun(actor, runEvent(`d-${i}`));
    expect(await drainRuns(actor, 10_000)).toBe(true);
    const distinct = [...new Set(given)];
    expect(given).toHaveLength(runs);
    expect(distinct).toHaveLength(3);
    expect(distinct.map(dependants)).toEqual([RUNS_PER_SIGNAL, RUNS_PER_SIGNAL, 10]);
    actor.stop();
  });

  it("a stop still ends the run under way through the run's own signal", async () => {
    let seen: AbortSignal | undefined;
    const actor = createActor(runsMachine, {
      input: {
        maxConcurrent: 1,
        logger: silentLogger(),
        execute: (_run, signal) =>
          new Promise<void>((resolve) => {
            seen = signal;
            signal.addEventListener("abort", () => resolve(), { once: true });
          }),
      },
    }).start();
    const { queue } = actor.getSnapshot().context;
    enqueueRun(actor, runEvent("long"));
    await new Promise((r) => setImmediate(r));
    expect(seen?.aborted).toBe(false);
    queue.stopActive();
    expect(seen?.aborted).toBe(true);
    actor.stop();
  });

  it("cron gives each scheduled run a signal of its own, not the scheduler's long-lived one", async () => {
    home = tempHome();
    const store = cronStore(join(home.dir, "cron", "jobs.json"));
    const T0 = Date.parse("2026-11-22T12:00:00Z");
    const tick: CronJob = {
      id: "t",
      name: "tick",
      schedule: "every 1s",
      prompt: "tick",
      deliver: "log",
      deliver_extra: {},
      state: "enabled",
      next_run: new Date(T0).toISOString(),
      created_at: new Date(T0).toISOString(),
    };
    await store.update((records) => {
      records.t = tick;
    });
    let now = T0;
    const signals: AbortSignal[] = [];
    const scheduler = createCronScheduler({
      stores: { profiles: () => ["default"], store: () => store },
      runJob: async (_job, _prompt, _trigger, _profile, signal) => {
        if (signal !== undefined) {
          signals.push(signal);
          composeAsARunDoes(signal);
        }
        return "ok";
      },
      logger: silentLogger(),
      clock: { now: () => now, setTimeout: () => 0, clearTimeout: () => {} },
    });
    for (let i = 0; i < 20; i++) {
      await scheduler.tick();
      await scheduler.idle();
      now += 1000;
    }
    expect(signals).toHaveLength(20);
    expect(new Set(signals).size).toBe(20);
    for (const signal of signals) expect(dependants(signal)).toBe(1);
  });
});
