import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it, vi } from "vitest";
import { silentLogger } from "../../../../src/io/log.js";
import type { RedisState } from "../../../../src/state/redisState.js";
import type { AcceptedEvent, ResolvedRoute } from "../../../../src/streams/context.js";
import { fakeClock } from "../../../helpers/gateway.js";
import { pendingRun } from "../../../helpers/pendingRun.js";
import { redisPerFile } from "../../../helpers/redisPerFile.js";
import { openTestRedisState } from "../../../helpers/testRedisState.js";

/**
 * `RedisState.watchRunDepth` (`--inspect` with state.backend: redis): the counts `runDepth` gives (the shared
 * queue's waiting runs, this instance's runs in its slot and outside it), told as this instance stores,
 * starts, releases and finishes runs, with no tick of its clock; its timer is gone once the state disconnects.
 */
const own = redisPerFile();

const routes: Record<string, ResolvedRoute> = {
  pr: { name: "pr", profile: "default", secret: "s", route: { prompt: "p", deliver: "log" } } as never,
};
const event = (deliveryId: string) =>
  ({
    ...pendingRun(deliveryId),
    route: { prompt: "p", deliver: "log" },
    payload: {},
    headers: {},
  }) as unknown as AcceptedEvent;

let opened: RedisState | undefined;
const gates = new Map<string, () => void>();
afterEach(async () => {
  for (const open of gates.values()) open();
  gates.clear();
  await opened?.stop(1000);
  await opened?.disconnect();
  opened = undefined;
});

describe("RedisState.watchRunDepth", { timeout: 30_000 }, () => {
  it("tells the counts as this instance stores, starts, releases and finishes runs", async () => {
    const gate = (id: string) =>
      new Promise<void>((resolve) => {
        gates.set(id, resolve);
      });
    const open = (id: string) => gates.get(id)?.();
    const state = await openTestRedisState(own.server.url, `rd${randomUUID()}`, {
      logger: silentLogger(),
      lookup: (name) => routes[name],
      async execute(run, _signal, slot) {
        const held = gate(run.deliveryId);
        // Its delivery waits to retry outside the slot (its reply kept with its job).
        if (run.deliveryId === "out") {
          slot.replied?.({ text: "reply" });
          expect(await slot.release(run, { dueAt: Date.now() + 60_000, attempts: 1 })).toBe(true);
        }
        await held;
      },
    });
    opened = state;
    const clock = fakeClock();
    const told: Array<{ waiting: number; active: number; retrying: number }> = [];
    state.watchRunDepth((depth) => told.push(depth), 1000, clock);
    state.start();
    const last = (depth: { waiting: number; active: number; retrying: number }) =>
      vi.waitFor(() => expect(told.at(-1)).toEqual(depth), { timeout: 10_000, interval: 10 });

    await state.enqueueRun(event("out"));
    await last({ waiting: 0, active: 0, retrying: 1 });
    await state.enqueueRun(event("in"));
    await last({ waiting: 0, active: 1, retrying: 1 });
    await state.enqueueRun(event("w"));
    await last({ waiting: 1, active: 1, retrying: 1 });
    open("in");
    await vi.waitFor(() => expect(gates.has("w")).toBe(true), { timeout: 10_000, interval: 10 });
    await last({ waiting: 0, active: 1, retrying: 1 });
    open("w");
    await last({ waiting: 0, active: 0, retrying: 1 });
    // Its delivery ends (its job, marked done, is then let run for a worker to finish).
    open("out");
    await last({ waiting: 0, active: 0, retrying: 0 });

    // Read on its clock every second besides, until the state disconnects.
    expect(clock.pendingTimers()).toBe(1);
    await state.stop(1000);
    await state.disconnect();
    opened = undefined;
    expect(clock.pendingTimers()).toBe(0);
  });
});
