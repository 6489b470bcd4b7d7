import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { type AnyActorRef, createActor, fromCallback, SimulatedClock } from "xstate";
import {
  type CoalesceObserver,
  type Coalescer,
  type CoalescerOptions,
  coalesceNote,
  createCoalescer,
  withCoalesceNote,
} from "../../../src/actors/coalescer.js";
import type { Route } from "../../../src/config/sections/webhook.js";
import { LAST_DISPATCHED_MS } from "../../../src/machines/coalesceGroup.js";
import { type AcceptedEvent, renderedOnly } from "../../../src/streams/context.js";
import { captureLogger } from "../../fakes/logCapture.js";

const ROUTE: Route = {
  deliver: "log",
  deliver_only: false,
  mirror_to_session: false,
  coalesce: { key: "pull_request.number", window_seconds: 30, max_wait_seconds: 300 },
};

function accepted(
  deliveryId: string,
  pr: number | undefined,
  route: Route = ROUTE,
  routeName = "gh",
): AcceptedEvent {
  return {
    routeName,
    route,
    profile: "default",
    event: "pull_request",
    deliveryId,
    payload: pr === undefined ? { action: "opened" } : { pull_request: { number: pr } },
    headers: {},
    prompt: `PR ${pr} (${deliveryId})`,
    extra: {},
    receivedAt: 0,
  };
}

type Mode = "light" | "actor" | "mixed";

function harness(mode: Mode, observer?: CoalesceObserver, extra: Partial<CoalescerOptions> = {}) {
  const clock = new SimulatedClock();
  const fired: Array<{ id: string; superseded: number }> = [];
  const parent =
    mode !== "light"
      ? createActor(
          fromCallback(() => {}),
          { clock },
        ).start()
      : undefined;
  const coalescer: Coalescer = createCoalescer({
    dispatch: (event, superseded) => fired.push({ id: event.deliveryId, superseded }),
    clock,
    ...(parent === undefined ? {} : { parent }),
    ...(observer === undefined ? {} : { observer }),
    // "mixed": the first two groups are actors, the rest light records (the --inspect cap).
    ...(mode === "mixed" ? { actorGroupLimit: 2 } : {}),
    // The clock that is never set is the simulated one too.
    elapsed: () => clock.now(),
    ...extra,
  });
  return { clock, fired, coalescer };
}

/**
 * Reopens on `coalescer` a saved group of key 1, of a route whose groups fire at once (window_seconds and
 * max_wait_seconds 0), of one event `deliveryId` received at `receivedAt`, with none of its windows left.
 */
function restoreAtOnce(coalescer: Coalescer, deliveryId: string, receivedAt: number): void {
  const atOnce: Route = {
    ...ROUTE,
    coalesce: { key: "pull_request.number", window_seconds: 0, max_wait_seconds: 0 },
  };
  coalescer.restore({
    id: "gh\u00001",
    latest: { ...accepted(deliveryId, 1, atOnce), receivedAt },
    merged: 1,
    quietLeftMs: 0,
    maxLeftMs: 0,
  });
}

describe.each<Mode>(["light", "actor", "mixed"])("coalescer (%s groups)", (mode) => {
  it("groups events with the same key and dispatches the latest once after the quiet window", () => {
    const { clock, fired, coalescer } = harness(mode);
    expect(coalescer.offer(accepted("d1", 1))).toBe("coalesced");
    clock.increment(10_000);
    expect(coalescer.offer(accepted("d2", 1))).toBe("coalesced");
    expect(coalescer.offer(accepted("d3", 1))).toBe("coalesced");
    expect(coalescer.pendingCount()).toBe(1);
    clock.increment(29_999);
    expect(fired).toEqual([]);
    clock.increment(1);
    expect(fired).toEqual([{ id: "d3", superseded: 2 }]);
    expect(coalescer.pendingCount()).toBe(0);
  });

  it("an event received earlier but finishing the pipeline later (a slow script) counts, but does not replace a newer one", () => {
    const { clock, fired, coalescer } = harness(mode);
    const at = (id: string, receivedAt: number) => ({ ...accepted(id, 1), receivedAt });
    coalescer.offer(at("first", 100));
    coalescer.offer(at("third", 300));
    coalescer.offer(at("second", 200));
    clock.increment(30_000);
    expect(fired).toEqual([{ id: "third", superseded: 2 }]);
    // Received in the same millisecond: the one offered last is the latest.
    coalescer.offer(at("x", 500));
    coalescer.offer(at("y", 500));
    clock.increment(30_000);
    expect(fired.at(-1)).toEqual({ id: "y", superseded: 1 });
  });

  it("keeps one group per (route, key)", () => {
    const { clock, fired, coalescer } = harness(mode);
    coalescer.offer(accepted("a1", 1));
    coalescer.offer(accepted("b1", 2));
    coalescer.offer(accepted("c1", 1, ROUTE, "other"));
    coalescer.offer(accepted("a2", 1));
    expect(coalescer.pendingCount()).toBe(3);
    clock.increment(30_000);
    expect(fired.sort((x, y) => x.id.localeCompare(y.id))).toEqual([
      { id: "a2", superseded: 1 },
      { id: "b1", superseded: 0 },
      { id: "c1", superseded: 0 },
    ]);
  });

  it("max wait caps a group that keeps receiving events", () => {
    const { clock, fired, coalescer } = harness(mode);
    coalescer.offer(accepted("e0", 5));
    for (let i = 1; i <= 29; i++) {
      clock.increment(10_000);
      coalescer.offer(accepted(`e${i}`, 5));
    }
    expect(fired).toEqual([]);
    clock.increment(10_000); // 300 s since the first event
    expect(fired).toEqual([{ id: "e29", superseded: 29 }]);
    // The next event opens a new group.
    expect(coalescer.offer(accepted("f0", 5))).toBe("coalesced");
    expect(coalescer.pendingCount()).toBe(1);
  });

  it("a key that does not resolve is not grouped", () => {
    const { fired, coalescer } = harness(mode);
    expect(coalescer.offer(accepted("x", undefined))).toBe("not_grouped");
    expect(coalescer.pendingCount()).toBe(0);
    expect(fired).toEqual([]);
  });

  it("a route without coalesce is not grouped", () => {
    const { coalescer } = harness(mode);
    const { coalesce: _c, ...plain } = ROUTE;
    expect(coalescer.offer(accepted("x", 1, plain))).toBe("not_grouped");
  });

  it("an event answered 503 after it was grouped (its record not durable) is withdrawn: a group owing no event answered 202 ends without a run; one that does still runs once", () => {
    const { clock, fired, coalescer } = harness(mode);
    const refused = accepted("refused", 1);
    coalescer.offer(refused);
    const kept = accepted("kept", 2);
    const late = accepted("late", 2);
    coalescer.offer(kept);
    coalescer.offer(late);
    coalescer.withdraw(refused);
    coalescer.withdraw(late);
    expect(coalescer.pendingCount()).toBe(1);
    // Withdrawing twice, or an event no group holds, changes nothing.
    coalescer.withdraw(refused);
    coalescer.withdraw(accepted("never", 3));
    clock.increment(30_000);
    // The group of 2 owes its run to "kept" (202), and carries the latest event received.
    expect(fired).toEqual([{ id: "late", superseded: 1 }]);
    // A group that fired is not touched by a late withdraw, nor is a new group of the same key.
    const again = accepted("again", 2);
    coalescer.offer(again);
    coalescer.withdraw(kept);
    clock.increment(30_000);
    expect(fired.at(-1)).toEqual({ id: "again", superseded: 0 });
    // The sender's retry of the refused event opens a group of its own: one run.
    coalescer.offer(accepted("refused", 1));
    clock.increment(30_000);
    expect(fired.filter((f) => f.id === "refused")).toEqual([{ id: "refused", superseded: 0 }]);
  });

  it("the sender's retry of an event answered 503 while its group is pending is the same event: counted once, in the group and in its record", () => {
    const merged: number[] = [];
    const { clock, fired, coalescer } = harness(mode, {
      updated: (_id, _latest, count) => merged.push(count),
      fired: () => {},
    });
    coalescer.offer(accepted("first", 1));
    const refused = accepted("second", 1);
    coalescer.offer(refused);
    coalescer.withdraw(refused);
    // The retry, answered 202 this time; then another delivery, counted as a new event.
    coalescer.offer(accepted("second", 1));
    coalescer.offer(accepted("third", 1));
    clock.increment(30_000);
    expect(fired).toEqual([{ id: "third", superseded: 2 }]);
    expect(merged).toEqual([1, 2, 2, 3]);
  });

  it("flushAll dispatches every pending group at once, none dropped", () => {
    const { clock, fired, coalescer } = harness(mode);
    for (let pr = 0; pr < 50; pr++) {
      coalescer.offer(accepted(`p${pr}-a`, pr));
      coalescer.offer(accepted(`p${pr}-b`, pr));
    }
    expect(coalescer.flushAll()).toBe(50);
    expect(fired).toHaveLength(50);
    expect(fired.every((f) => f.id.endsWith("-b") && f.superseded === 1)).toBe(true);
    expect(coalescer.pendingCount()).toBe(0);
    clock.increment(600_000);
    expect(fired).toHaveLength(50);
  });

  it("a saved group reopened after a request opened one for its key (the listener opens first) is the same group: one run counting every event, max wait from the saved group's first event", () => {
    const updates: Array<{ merged: number; latest: string; offered: string }> = [];
    const { clock, fired, coalescer } = harness(mode, {
      updated: (_id, latest, merged, offered) =>
        updates.push({ merged, latest: latest.deliveryId, offered: offered.deliveryId }),
      fired: () => {},
    });
    coalescer.offer({ ...accepted("new", 1), receivedAt: 5_000 });
    coalescer.restore({
      id: "gh\u00001",
      latest: { ...accepted("saved", 1), receivedAt: 1_000 },
      merged: 2,
      quietLeftMs: 10_000,
      maxLeftMs: 40_000,
    });
    expect(coalescer.pendingCount()).toBe(1);
    // The group's record counts the saved events; the saved latest's id is remembered on its own.
    expect(updates.at(-1)).toEqual({ merged: 3, latest: "new", offered: "saved" });
    clock.increment(20_000);
    coalescer.offer({ ...accepted("newer", 1), receivedAt: 9_000 });
    clock.increment(19_999);
    expect(fired).toEqual([]);
    clock.increment(1);
    expect(fired).toEqual([{ id: "newer", superseded: 3 }]);
    clock.increment(600_000);
    expect(fired).toHaveLength(1);
    expect(coalescer.pendingCount()).toBe(0);
  });

  it("a saved group reopened after a request for its key opened a group that already fired (window_seconds: 0): that run superseded the saved events, which never run after it; the key's next group counts them", () => {
    const ZERO: Route = {
      ...ROUTE,
      coalesce: { key: "pull_request.number", window_seconds: 0, max_wait_seconds: 300 },
    };
    const told: string[] = [];
    const log = captureLogger();
    const { clock, fired, coalescer } = harness(
      mode,
      {
        updated: (id, latest, merged) => told.push(`updated ${id} ${latest.deliveryId} ${merged}`),
        fired: (id) => told.push(`fired ${id}`),
        superseded: (id, offered) => told.push(`superseded ${id} ${offered.deliveryId}`),
      },
      { logger: log.logger },
    );
    // Received by this process (the listener opened first), its group fired at the next tick, before the
    // saved group of its key was reopened.
    clock.increment(5);
    expect(
      coalescer.offer({ ...accepted("new", 1, ZERO), receivedAt: 5_000, receivedTick: clock.now() }),
    ).toBe("coalesced");
    clock.increment(1);
    expect(fired).toEqual([{ id: "new", superseded: 0 }]);
    told.length = 0;
    // Saved before the restart, with time left of its windows (and with none: it would fire at once).
    coalescer.restore({
      id: "gh\u00001",
      latest: { ...accepted("saved", 1, ZERO), receivedAt: 9_000 },
      merged: 2,
      quietLeftMs: 0,
      maxLeftMs: 200_000,
    });
    expect(coalescer.pendingCount()).toBe(0);
    clock.increment(300_000);
    expect(fired).toEqual([{ id: "new", superseded: 0 }]);
    // Its record ends (a later start does not reopen it) and its latest event is told superseded by that run.
    expect(told).toEqual(["superseded gh\u00001 saved", "fired gh\u00001"]);
    expect(log.messages()).toContain(
      "[webhook] gh: saved coalescing group superseded by a run already dispatched — its latest event (saved) was received before that run's event (new), whose group a request opened and fired before this one was reopened from the journal; the key's next group counts its 2 events",
    );
    // Nothing lost from the count: the key's next group counts the saved group's two events.
    expect(
      coalescer.offer({ ...accepted("next", 1, ZERO), receivedAt: 400_000, receivedTick: clock.now() }),
    ).toBe("coalesced");
    clock.increment(1);
    expect(fired).toEqual([
      { id: "new", superseded: 0 },
      { id: "next", superseded: 2 },
    ]);
    // A saved group of another key still runs (one of key 1 after a run of a saved event: the next test).
    coalescer.restore({
      id: "gh\u00002",
      latest: { ...accepted("other", 2, ZERO), receivedAt: 9_000 },
      merged: 1,
      quietLeftMs: 0,
      maxLeftMs: 0,
    });
    clock.increment(1);
    expect(fired.at(-1)).toEqual({ id: "other", superseded: 0 });
  });
  it("a saved group of a key whose last run was of a saved event received before it still runs after that run; one received before that run's event does not", () => {
    const { clock, fired, coalescer } = harness(mode);
    const saved = (deliveryId: string, receivedAt: number) =>
      restoreAtOnce(coalescer, deliveryId, receivedAt);
    // Two saved groups of key 1 (two journals taken in, a pending-runs file after the journal): the first fires
    // at once, its event received by no request of this process.
    saved("first", 5_000);
    clock.increment(1);
    expect(fired).toEqual([{ id: "first", superseded: 0 }]);
    // Received after it: newer data, its run owed.
    saved("later", 9_000);
    clock.increment(1);
    expect(fired).toEqual([
      { id: "first", superseded: 0 },
      { id: "later", superseded: 0 },
    ]);
    // Received before that run's event: superseded by it, never run after it.
    saved("earlier", 7_000);
    clock.increment(300_000);
    expect(fired).toHaveLength(2);
    expect(coalescer.pendingCount()).toBe(0);
  });

  it("a saved group of a key whose last run's event was received in the same millisecond as its own still runs after that run: the same millisecond is not before", () => {
    const { clock, fired, coalescer } = harness(mode);
    const saved = (deliveryId: string, receivedAt: number) =>
      restoreAtOnce(coalescer, deliveryId, receivedAt);
    saved("first", 9_000);
    clock.increment(1);
    expect(fired).toEqual([{ id: "first", superseded: 0 }]);
    // Received in the same millisecond as the run's event: not known to be older, so its run is owed.
    saved("same", 9_000);
    clock.increment(1);
    expect(fired).toEqual([
      { id: "first", superseded: 0 },
      { id: "same", superseded: 0 },
    ]);
  });

  it("a saved group reopened after a restart with its event ahead of a clock set back while the gateway was down: an event received since is its latest, joined after the reopening or before it", () => {
    const { clock, fired, coalescer } = harness(mode);
    const savedAt = 1_000_000;
    // The system clock reads 10 minutes behind the saved event's receive time.
    const wall = () => savedAt - 600_000 + clock.now();
    coalescer.restore({
      id: "gh\u00001",
      latest: { ...accepted("d-a", 1), receivedAt: savedAt },
      merged: 1,
      quietLeftMs: 30_000,
      maxLeftMs: 300_000,
    });
    clock.increment(1_000);
    expect(coalescer.offer({ ...accepted("d-b", 1), receivedAt: wall(), receivedTick: clock.now() })).toBe(
      "coalesced",
    );
    // An event without a tick (received before this process, as the saved one was) does not replace it.
    clock.increment(1_000);
    expect(coalescer.offer({ ...accepted("older", 1), receivedAt: savedAt + 1 })).toBe("coalesced");
    clock.increment(30_000);
    expect(fired).toEqual([{ id: "d-b", superseded: 2 }]);
    // A request the listener passed on before the saved group was reopened (the listener opens first).
    coalescer.offer({ ...accepted("d-c", 2), receivedAt: wall(), receivedTick: clock.now() });
    coalescer.restore({
      id: "gh\u00002",
      latest: { ...accepted("e-a", 2), receivedAt: savedAt },
      merged: 1,
      quietLeftMs: 30_000,
      maxLeftMs: 300_000,
    });
    clock.increment(30_000);
    expect(fired.at(-1)).toEqual({ id: "d-c", superseded: 1 });
  });
});

describe.each<Mode>(["light", "actor", "mixed"])(
  "an event that reaches the coalescer after a newer event's group fired (a slower script, a body that came slowly; %s groups)",
  (mode) => {
    // A route with a script and a 1 s quiet window.
    const SCRIPTED: Route = {
      ...ROUTE,
      script: "slow.sh",
      coalesce: { key: "pull_request.number", window_seconds: 1, max_wait_seconds: 300 },
    };
    /** An event of `route` received at `receivedAt` (ms on the simulated clock). */
    const at = (id: string, receivedAt: number, route: Route = SCRIPTED, pr = 1) => ({
      ...accepted(id, pr, route),
      receivedAt,
    });
    const scripted = (observer?: CoalesceObserver, extra: Partial<CoalescerOptions> = {}) =>
      harness(mode, observer, extra);
    /** `offerRetired`, and when it runs the event at once, the run queue taking its run (`retiredQueued`). */
    const runRetired = (coalescer: Coalescer, event: AcceptedEvent) => {
      const grouped = coalescer.offerRetired(event);
      if (grouped === "not_grouped") coalescer.retiredQueued(event);
      return grouped;
    };

    it("is answered coalesced and superseded, never run after the newer one; the key's next group counts it", () => {
      const superseded: string[] = [];
      const { clock, fired, coalescer } = scripted({
        updated: () => {},
        fired: () => {},
        superseded: (_id, offered) => superseded.push(offered.deliveryId),
      });
      // A is received at 0 and spends 2 s in its script; B, received at 300, is out of its own at once.
      clock.increment(300);
      expect(coalescer.offer(at("B", 300))).toBe("coalesced");
      clock.increment(1_000);
      expect(fired).toEqual([{ id: "B", superseded: 0 }]);
      clock.increment(700);
      expect(coalescer.offer(at("A", 0))).toEqual({ supersededBy: "B" });
      expect(coalescer.pendingCount()).toBe(0);
      expect(superseded).toEqual(["A"]);
      clock.increment(5_000);
      expect(fired).toEqual([{ id: "B", superseded: 0 }]);
      // The key's next event opens a group, which counts A among the events it supersedes.
      expect(coalescer.offer(at("C", 7_000))).toBe("coalesced");
      expect(coalescer.pendingEvents()[0]?.prompt).toMatch(
        /^\[Coalesced: this run covers 2 events; 1 earlier/,
      );
      clock.increment(1_000);
      expect(fired).toEqual([
        { id: "B", superseded: 0 },
        { id: "C", superseded: 1 },
      ]);
      // Counted once: the group after it does not count A again.
      clock.increment(100);
      coalescer.offer(at("D", 8_100));
      clock.increment(1_000);
      expect(fired.at(-1)).toEqual({ id: "D", superseded: 0 });
    });

    it("one received in the same millisecond as the dispatched event, or after it, opens a group; other keys and routes are not concerned", () => {
      const { clock, fired, coalescer } = scripted();
      coalescer.offer(at("B", 300));
      clock.increment(1_000);
      expect(coalescer.offer(at("same-ms", 300))).toBe("coalesced");
      expect(coalescer.offer(at("other-key", 0, SCRIPTED, 2))).toBe("coalesced");
      expect(coalescer.offer({ ...at("other-route", 0), routeName: "other" })).toBe("coalesced");
      expect(coalescer.pendingCount()).toBe(3);
      clock.increment(1_000);
      expect(fired.map((f) => f.id).sort()).toEqual(["B", "other-key", "other-route", "same-ms"]);
    });

    it("receive times are compared in whole milliseconds: an event received in the same millisecond as the dispatched one, a fraction of one before it, opens a group; within a group the one offered last is the latest", () => {
      const { clock, fired, coalescer } = scripted();
      clock.increment(1_001);
      coalescer.offer({ ...at("B", 1_000), receivedTick: 1_000.6 });
      clock.increment(1_000);
      expect(fired).toEqual([{ id: "B", superseded: 0 }]);
      // Received in the millisecond before B's: superseded (the key's next group counts it).
      expect(coalescer.offer({ ...at("A0", 999), receivedTick: 999.9 })).toEqual({ supersededBy: "B" });
      expect(coalescer.offer({ ...at("A", 1_000), receivedTick: 1_000.2 })).toBe("coalesced");
      clock.increment(1_000);
      expect(fired.at(-1)).toEqual({ id: "A", superseded: 1 });
      // In one group: received in the same millisecond, the one offered last wins, whatever the fractions.
      coalescer.offer({ ...at("C", 3_000), receivedTick: 3_000.7 });
      coalescer.offer({ ...at("D", 3_000), receivedTick: 3_000.1 });
      clock.increment(1_000);
      expect(fired.at(-1)).toEqual({ id: "D", superseded: 1 });
    });

    it("the receive times are compared on the clock that is never set, when both events have it", () => {
      const { clock, fired, coalescer } = scripted();
      // The system clock was set back between A and B: B's receivedAt is the smaller.
      coalescer.offer({ ...at("B", 100), receivedTick: 300 });
      clock.increment(1_000);
      expect(coalescer.offer({ ...at("A", 5_000), receivedTick: 0 })).toEqual({ supersededBy: "B" });
      expect(coalescer.pendingCount()).toBe(0);
      expect(fired).toEqual([{ id: "B", superseded: 0 }]);
    });

    it("a group restored after a restart, its saved event ahead of a clock set back while the gateway was down: the events received since are not superseded by its run, they open the key's next group", () => {
      const superseded: string[] = [];
      const { clock, fired, coalescer } = scripted({
        updated: () => {},
        fired: () => {},
        superseded: (_id, offered) => superseded.push(offered.deliveryId),
      });
      // The clock that is never set starts anew with the process; the system clock reads 10 minutes behind
      // the saved event's receive time (a VM snapshot restored, an NTP step at boot).
      const savedAt = 1_000_000;
      const wall = () => savedAt - 600_000 + clock.now();
      // Received by this process as the group was reopened, through the pipeline only after it fired.
      const early = { ...at("d-early", wall()), receivedTick: clock.now() };
      clock.increment(10);
      coalescer.restore({
        id: "gh\u00001",
        latest: at("d-a", savedAt),
        merged: 1,
        quietLeftMs: 0,
        maxLeftMs: 0,
      });
      clock.increment(1);
      expect(fired).toEqual([{ id: "d-a", superseded: 0 }]);
      expect(coalescer.offer(early)).toBe("coalesced");
      clock.increment(1_000);
      expect(fired.at(-1)).toEqual({ id: "d-early", superseded: 0 });
      clock.increment(5_000);
      expect(coalescer.offer({ ...at("d-b", wall()), receivedTick: clock.now() })).toBe("coalesced");
      clock.increment(1_000);
      expect(fired.at(-1)).toEqual({ id: "d-b", superseded: 0 });
      clock.increment(40_000);
      expect(coalescer.offer({ ...at("d-c", wall()), receivedTick: clock.now() })).toBe("coalesced");
      clock.increment(1_000);
      expect(fired.map((f) => f.id)).toEqual(["d-a", "d-early", "d-b", "d-c"]);
      expect(superseded).toEqual([]);
      // offerRetired alike: run at once, not superseded by the restored group's run.
      coalescer.restore({
        id: "gh\u00002",
        latest: at("e-a", savedAt, SCRIPTED, 2),
        merged: 1,
        quietLeftMs: 0,
        maxLeftMs: 0,
      });
      clock.increment(1);
      expect(fired.at(-1)).toEqual({ id: "e-a", superseded: 0 });
      expect(coalescer.offerRetired({ ...at("e-b", wall(), SCRIPTED, 2), receivedTick: clock.now() })).toBe(
        "not_grouped",
      );
      expect(superseded).toEqual([]);
    });

    it("an event received after a group fired is never superseded by its run, whatever the receive times say", () => {
      const { clock, fired, coalescer } = scripted();
      coalescer.offer({ ...at("B", 500_000), receivedTick: 0 });
      clock.increment(1_000);
      expect(fired).toEqual([{ id: "B", superseded: 0 }]);
      // Received at the fire's tick and after it, the system clock behind B's receive time.
      expect(coalescer.offer({ ...at("C", 1_000), receivedTick: 1_000 })).toBe("coalesced");
      clock.increment(1_000);
      expect(fired.at(-1)).toEqual({ id: "C", superseded: 0 });
      // Received before the fire (its tick before B's): superseded, as before.
      expect(coalescer.offer({ ...at("A", 600_000), receivedTick: -1 })).toEqual({ supersededBy: "C" });
    });

    it("the key remembers the fired group for an hour after its fire, not the script timeout alone (a body may have come slowly, a script waited for a slot), and at most as many keys as groups may pend", () => {
      const { clock, coalescer } = scripted(undefined, { maxGroups: 2 });
      coalescer.offer(at("B", 0));
      clock.increment(1_000);
      // Long past any script timeout (30 s by default), still remembered.
      clock.increment(60_000);
      expect(coalescer.offer(at("early", -1))).toEqual({ supersededBy: "B" });
      expect(coalescer.pendingCount()).toBe(0);
      clock.increment(LAST_DISPATCHED_MS - 60_001);
      expect(coalescer.offer(at("early", -1))).toEqual({ supersededBy: "B" });
      expect(coalescer.pendingCount()).toBe(0);
      clock.increment(1);
      // Lapsed: no earlier request is on its way that long; one that comes opens a group.
      coalescer.offer(at("lapsed", -1));
      expect(coalescer.pendingCount()).toBe(1);
      coalescer.flushAll();
      clock.increment(LAST_DISPATCHED_MS);
      // Three keys fire one after another; the first one's memory makes room for the third's.
      for (const pr of [2, 3, 4]) {
        coalescer.offer(at(`k${pr}`, 30_000, SCRIPTED, pr));
        coalescer.flushAll();
      }
      expect(coalescer.offer(at("k3-early", 0, SCRIPTED, 3))).toEqual({ supersededBy: "k3" });
      expect(coalescer.offer(at("k4-early", 0, SCRIPTED, 4))).toEqual({ supersededBy: "k4" });
      expect(coalescer.pendingCount()).toBe(0);
      expect(coalescer.offer(at("k2-early", 0, SCRIPTED, 2))).toBe("coalesced");
      expect(coalescer.pendingCount()).toBe(1);
    });

    it("a route without a script remembers too: an earlier event whose body came in slowly is superseded, not run alone after the newer one", () => {
      const { clock, fired, coalescer } = scripted();
      const { script: _s, ...plain } = SCRIPTED;
      coalescer.offer(at("B", 300, plain));
      clock.increment(1_000);
      expect(fired).toEqual([{ id: "B", superseded: 0 }]);
      // A's head came at 0; its body was all in only now.
      clock.increment(2_000);
      expect(coalescer.offer(at("A", 0, plain))).toEqual({ supersededBy: "B" });
      expect(coalescer.pendingCount()).toBe(0);
      clock.increment(5_000);
      expect(fired).toEqual([{ id: "B", superseded: 0 }]);
    });

    it("offerRetired (an event a reload kept from grouping): opens no group; superseded by a run already dispatched of a later event, it is counted as offer counts it", () => {
      const superseded: string[] = [];
      const { clock, fired, coalescer } = scripted({
        updated: () => {},
        fired: () => {},
        superseded: (_id, offered) => superseded.push(offered.deliveryId),
      });
      expect(runRetired(coalescer, at("alone", 0))).toBe("not_grouped");
      expect(coalescer.pendingCount()).toBe(0);
      coalescer.offer(at("B", 300));
      coalescer.flushAll();
      expect(fired).toEqual([{ id: "B", superseded: 0 }]);
      expect(runRetired(coalescer, at("later", 400))).toBe("not_grouped");
      expect(runRetired(coalescer, at("other-key", 0, SCRIPTED, 2))).toBe("not_grouped");
      // "later" ran at once, after B's run: the latest run of the key supersedes A.
      expect(runRetired(coalescer, at("A", 0))).toEqual({ supersededBy: "later" });
      expect(superseded).toEqual(["A"]);
      expect(coalescer.pendingCount()).toBe(0);
      // The key's next group counts it.
      coalescer.offer(at("C", 2_000));
      // One more, with that group pending: it joins it, as offer has it join.
      expect(runRetired(coalescer, at("A2", 100))).toBe("coalesced");
      expect(coalescer.pendingCount()).toBe(1);
      clock.increment(1_000);
      expect(fired.at(-1)).toEqual({ id: "C", superseded: 2 });
    });

    it("two events of a key a reload retired in their scripts: the newer, through first, runs at once; the older, through after it, is superseded by that run (it ran after it) and counted by the key's next group", () => {
      const superseded: string[] = [];
      const { clock, fired, coalescer } = scripted({
        updated: () => {},
        fired: () => {},
        superseded: (_id, offered) => superseded.push(offered.deliveryId),
      });
      // A received at 0 (3 s in its script), B at 300 (1 s): the reload at 600 retired both.
      clock.increment(1_300);
      expect(runRetired(coalescer, { ...at("B", 300), receivedTick: 300 })).toBe("not_grouped");
      clock.increment(1_700);
      expect(runRetired(coalescer, { ...at("A", 0), receivedTick: 0 })).toEqual({ supersededBy: "B" });
      expect(superseded).toEqual(["A"]);
      expect(coalescer.pendingCount()).toBe(0);
      // An event of the key whose body came in slowly since before B (offered as the reloaded route's) too.
      expect(coalescer.offer({ ...at("C", 100), receivedTick: 100 })).toEqual({ supersededBy: "B" });
      // The key's next group counts both; no group ran either.
      expect(coalescer.offer({ ...at("D", 5_000), receivedTick: clock.now() })).toBe("coalesced");
      clock.increment(1_000);
      expect(fired).toEqual([{ id: "D", superseded: 2 }]);
    });

    it("a retired event joins the group the reloaded route opened for its key, received before that group's event or after it, and the group runs the newest once", () => {
      const { clock, fired, coalescer } = scripted();
      // C's head came at 0 and its body after the reload: it opened the key's group of the reloaded route.
      clock.increment(700);
      expect(coalescer.offer({ ...at("C", 0), receivedTick: 0 })).toBe("coalesced");
      // A, received at 300, out of its script after that: it joins, and is the group's latest.
      clock.increment(100);
      expect(runRetired(coalescer, { ...at("A", 300), receivedTick: 300 })).toBe("coalesced");
      clock.increment(1_000);
      expect(fired).toEqual([{ id: "A", superseded: 1 }]);
      // The other way round: the group's event is the newer one, and stays its latest.
      expect(coalescer.offer({ ...at("N", 1_750), receivedTick: 1_750 })).toBe("coalesced");
      expect(runRetired(coalescer, { ...at("O", 1_700), receivedTick: 1_700 })).toBe("coalesced");
      clock.increment(1_000);
      expect(fired.at(-1)).toEqual({ id: "N", superseded: 1 });
    });

    it("an event superseded before a retired event ran at once, then answered 503 after all, is not counted by the next group", () => {
      // Without the 503 the next group counts it (the retired run's memory keeps the key's late count);
      // with it, it does not.
      for (const withdrawn of [false, true]) {
        const { clock, fired, coalescer } = scripted();
        coalescer.offer({ ...at("B", 300), receivedTick: 300 });
        clock.increment(1_000);
        const refused = { ...at("A", 0), receivedTick: 0 };
        expect(coalescer.offer(refused)).toEqual({ supersededBy: "B" });
        expect(runRetired(coalescer, { ...at("R", 1_200), receivedTick: 1_200 })).toBe("not_grouped");
        if (withdrawn) coalescer.withdraw(refused);
        coalescer.offer({ ...at("C", 2_000), receivedTick: clock.now() });
        clock.increment(1_000);
        expect(fired.at(-1)).toEqual({ id: "C", superseded: withdrawn ? 0 : 1 });
      }
    });

    it("a key's late events not yet counted are passed on to a retired event's run at once: its next group counts them", () => {
      const { clock, fired, coalescer } = scripted();
      // B's group fires; A, received before B, comes late and is superseded by its run.
      coalescer.offer({ ...at("B", 300), receivedTick: 300 });
      clock.increment(1_000);
      expect(coalescer.offer({ ...at("A", 0), receivedTick: 0 })).toEqual({ supersededBy: "B" });
      // R, retired by a reload, runs at once; C then opens the key's next group, which counts A.
      expect(runRetired(coalescer, { ...at("R", 1_200), receivedTick: 1_200 })).toBe("not_grouped");
      expect(coalescer.offer({ ...at("C", 2_000), receivedTick: clock.now() })).toBe("coalesced");
      clock.increment(1_000);
      expect(fired).toEqual([
        { id: "B", superseded: 0 },
        { id: "C", superseded: 1 },
      ]);
    });

    it("the log line of an event superseded by a retired event's run at once says that run was its own, not a group's; one superseded by a group's run says the group fired", () => {
      const log = captureLogger();
      const { clock, coalescer } = scripted(undefined, { logger: log.logger });
      clock.increment(1_300);
      expect(runRetired(coalescer, { ...at("B", 300), receivedTick: 300 })).toBe("not_grouped");
      expect(coalescer.offer({ ...at("A", 0), receivedTick: 0 })).toEqual({ supersededBy: "B" });
      // C's group fires; D, received before C, comes late.
      coalescer.offer({ ...at("C", 1_400), receivedTick: clock.now() });
      clock.increment(1_000);
      expect(coalescer.offer({ ...at("D", 1_250), receivedTick: 1_250 })).toEqual({ supersededBy: "C" });
      const superseded = log.messages().filter((m) => m.includes("superseded by a run already dispatched"));
      expect(superseded).toEqual([
        "[webhook] gh: coalesced event superseded by a run already dispatched — it was received before that run's event (B), whose run (its own, a reload having kept it from grouping) was dispatched before this one was through the pipeline; the key's next group counts it",
        "[webhook] gh: coalesced event superseded by a run already dispatched — it was received before that run's event (C), whose group fired before this one was through the pipeline; the key's next group counts it",
      ]);
    });

    it("a retired event whose run the run queue refused (503, full) supersedes nothing: an older event of its key, through after it, runs", () => {
      const superseded: string[] = [];
      const { clock, coalescer } = scripted({
        updated: () => {},
        fired: () => {},
        superseded: (_id, offered) => superseded.push(offered.deliveryId),
      });
      clock.increment(1_300);
      // B is answered 503: retiredQueued is not called.
      expect(coalescer.offerRetired({ ...at("B", 300), receivedTick: 300 })).toBe("not_grouped");
      clock.increment(1_700);
      const older = { ...at("A", 100), receivedTick: 100 };
      expect(coalescer.offerRetired(older)).toBe("not_grouped");
      coalescer.retiredQueued(older);
      expect(superseded).toEqual([]);
      // A's run is remembered: an event received before it, through after it, is superseded by it.
      expect(coalescer.offer({ ...at("S", 50), receivedTick: 50 })).toEqual({ supersededBy: "A" });
      // B's retry, received since, opens the key's next group (counting S).
      expect(coalescer.offer({ ...at("B", 3_000), receivedTick: clock.now() })).toBe("coalesced");
    });

    it("a retired event's run withdrawn after all (its record not durable, a copy without its payload given): the key's memory is the one that run replaced, its late count included", () => {
      const superseded: string[] = [];
      const { clock, fired, coalescer } = scripted({
        updated: () => {},
        fired: () => {},
        superseded: (_id, offered) => superseded.push(offered.deliveryId),
      });
      coalescer.offer({ ...at("B", 300), receivedTick: 300 });
      clock.increment(1_000);
      const retired = { ...at("R", 1_200), receivedTick: 1_200 };
      expect(runRetired(coalescer, retired)).toBe("not_grouped");
      // Withdrawn by the event the durable stage holds (its payload dropped): R's run never runs.
      coalescer.withdraw(renderedOnly(retired));
      // E, received before B: still superseded by B's run. M, received after B (before R): not superseded.
      expect(coalescer.offer({ ...at("E", 0), receivedTick: 0 })).toEqual({ supersededBy: "B" });
      expect(coalescer.offer({ ...at("M", 800), receivedTick: 800 })).toBe("coalesced");
      expect(superseded).toEqual(["E"]);
      clock.increment(1_000);
      expect(fired).toEqual([
        { id: "B", superseded: 0 },
        { id: "M", superseded: 1 },
      ]);
      // A withdraw of an event with no such memory (or a second one) changes nothing.
      coalescer.withdraw(renderedOnly(retired));
      expect(coalescer.offer({ ...at("F", 100), receivedTick: 100 })).toEqual({ supersededBy: "M" });
    });

    it.each([
      ["in the order they came (R1, whose memory R2 replaced, first)", ["R1", "R2"]],
      ["R2 first", ["R2", "R1"]],
      ["with a third between them (R2, R1, R3)", ["R2", "R1", "R3"]],
    ])(
      "retired runs of a key whose records failed in one batch, withdrawn %s: the key's memory is the one before them all, never a withdrawn run's",
      (_order, order) => {
        const superseded: string[] = [];
        const { clock, fired, coalescer } = scripted({
          updated: () => {},
          fired: () => {},
          superseded: (_id, offered) => superseded.push(offered.deliveryId),
        });
        // Key 1: B's group fired before the runs. Key 2: no run of it before them.
        coalescer.offer({ ...at("B", 300), receivedTick: 300 });
        clock.increment(1_000);
        expect(fired).toEqual([{ id: "B", superseded: 0 }]);
        const runs = new Map<string, AcceptedEvent>();
        for (const [id, t] of [
          ["R1", 1_100],
          ["R2", 1_200],
          ["R3", 1_250],
        ] as const) {
          if (!order.includes(id)) continue;
          for (const pr of [1, 2]) {
            const event = { ...at(`${id}-${pr}`, t, SCRIPTED, pr), receivedTick: t };
            expect(runRetired(coalescer, event)).toBe("not_grouped");
            runs.set(`${id}-${pr}`, event);
          }
        }
        // The same batch failed for all of them: the durable stage withdraws each (a copy without its payload).
        for (const pr of [1, 2])
          for (const id of order) coalescer.withdraw(renderedOnly(runs.get(`${id}-${pr}`) as AcceptedEvent));
        // Key 1: E, received before B, is superseded by B's run; M, received after B (before R1), runs.
        expect(coalescer.offer({ ...at("E", 0), receivedTick: 0 })).toEqual({ supersededBy: "B" });
        expect(coalescer.offer({ ...at("M", 800), receivedTick: 800 })).toBe("coalesced");
        // Key 2: A, received before every run, is through its script after them, and runs.
        expect(runRetired(coalescer, { ...at("A", 500, SCRIPTED, 2), receivedTick: 500 })).toBe(
          "not_grouped",
        );
        expect(superseded).toEqual(["E"]);
        clock.increment(1_000);
        expect(fired).toEqual([
          { id: "B", superseded: 0 },
          { id: "M", superseded: 1 },
        ]);
      },
    );

    it("one answered 503 after all (its record not durable) is not counted by the next group", () => {
      const { clock, fired, coalescer } = scripted();
      coalescer.offer(at("B", 300));
      clock.increment(1_000);
      const refused = at("A", 0);
      expect(coalescer.offer(refused)).toEqual({ supersededBy: "B" });
      coalescer.withdraw(refused);
      coalescer.withdraw(refused);
      coalescer.offer(at("C", 2_000));
      clock.increment(1_000);
      expect(fired.at(-1)).toEqual({ id: "C", superseded: 0 });
    });

    it("a group's record is written before the group takes an event in: one that cannot be written (its request answered 500) leaves the group as it was, offered or retired, and opens none", () => {
      const recorded: Array<[string, number]> = [];
      const { clock, fired, coalescer } = scripted({
        // As the journal's: the record of a group whose latest event is past the longest JSON text throws.
        updated: (_id, latest, merged) => {
          if (latest.deliveryId.startsWith("huge")) throw new RangeError("Invalid string length");
          recorded.push([latest.deliveryId, merged]);
        },
        fired: () => {},
      });
      clock.increment(300);
      expect(coalescer.offer(at("A", 300))).toBe("coalesced");
      // Received after A, each would be the group's latest event: joined before its record threw, it was the
      // event the group ran (and recorded as its run, from the group's timer).
      expect(() => coalescer.offer(at("huge-offered", 400))).toThrow(RangeError);
      expect(() => coalescer.offerRetired(at("huge-retired", 500))).toThrow(RangeError);
      expect(coalescer.pendingEvents()).toEqual([renderedOnly(at("A", 300))]);
      clock.increment(1_000);
      expect(fired).toEqual([{ id: "A", superseded: 0 }]);
      // L, late, is counted by the key's next group: not by one whose record threw, which is never opened.
      expect(coalescer.offer(at("L", 100))).toEqual({ supersededBy: "A" });
      expect(() => coalescer.offer(at("huge-new", 2_000))).toThrow(RangeError);
      expect(coalescer.pendingCount()).toBe(0);
      clock.increment(1_000);
      expect(fired).toEqual([{ id: "A", superseded: 0 }]);
      expect(coalescer.offer(at("C", 3_000))).toBe("coalesced");
      clock.increment(1_000);
      expect(fired).toEqual([
        { id: "A", superseded: 0 },
        { id: "C", superseded: 1 },
      ]);
      expect(recorded).toEqual([
        ["A", 1],
        ["C", 2],
      ]);
    });
  },
);

describe("the reason a group fired (logged): the bound that ended first, max_wait when both end at once", () => {
  function reasons(run: (coalescer: Coalescer, clock: SimulatedClock) => void, mode: Mode = "light") {
    const log = captureLogger();
    const clock = new SimulatedClock();
    const parent =
      mode === "actor"
        ? createActor(
            fromCallback(() => {}),
            { clock },
          ).start()
        : undefined;
    const coalescer = createCoalescer({
      dispatch: () => {},
      clock,
      logger: log.logger,
      ...(parent === undefined ? {} : { parent }),
    });
    run(coalescer, clock);
    return log.lines().map((line) => (JSON.parse(line) as { reason?: string }).reason);
  }
  const restoredAs = (quietLeftMs: number, maxLeftMs: number, mode: Mode) =>
    reasons((coalescer, clock) => {
      coalescer.restore({ id: "gh\u00001", latest: accepted("saved", 1), merged: 3, quietLeftMs, maxLeftMs });
      clock.increment(1);
    }, mode);

  it.each<Mode>(["light", "actor"])(
    "a group reopened after a crash past both of its bounds reports the one that ended first (%s)",
    (mode) => {
      const restored = (quietLeftMs: number, maxLeftMs: number) => restoredAs(quietLeftMs, maxLeftMs, mode);
      // The crash came at the max wait, when the quiet window ended too (and after): max_wait.
      expect(restored(-1_000, -1_000)).toEqual(["max_wait"]);
      expect(restored(-500, -3_000)).toEqual(["max_wait"]);
      // The quiet window ended before the max wait did.
      expect(restored(-5_000, -1_000)).toEqual(["quiet_window"]);
      // Still ahead: the nearer bound.
      expect(restored(2_000, 2_000).length).toBe(0);
    },
  );

  it("on Node's own timers, a group reopened past both bounds whose quiet window ended first says so", async () => {
    const log = captureLogger();
    const coalescer = createCoalescer({ dispatch: () => {}, logger: log.logger });
    coalescer.restore({
      id: "gh\u00001",
      latest: accepted("saved", 1),
      merged: 3,
      quietLeftMs: -5_000,
      maxLeftMs: -1_000,
    });
    await vi.waitFor(() => expect(coalescer.pendingCount()).toBe(0));
    expect(log.lines().map((line) => (JSON.parse(line) as { reason?: string }).reason)).toEqual([
      "quiet_window",
    ]);
  });

  it("a group reopened for a route that no longer coalesces fires at once, once, as a flush (no bound of it ended)", () => {
    const { coalesce: _dropped, ...plain } = ROUTE;
    expect(
      reasons((coalescer, clock) => {
        coalescer.restore({
          id: "gh\u00001",
          latest: accepted("saved", 1, plain),
          merged: 3,
          quietLeftMs: 0,
          maxLeftMs: 0,
        });
        clock.increment(1);
        expect(coalescer.pendingCount()).toBe(0);
        clock.increment(3_600_000);
      }),
    ).toEqual(["flush"]);
  });

  it.each<Mode>(["light", "actor"])(
    "a reopened %s group whose bounds are both ahead fires at the nearer, named as such",
    (mode) => {
      const run = (quietLeftMs: number, maxLeftMs: number) =>
        reasons((coalescer, clock) => {
          coalescer.restore({
            id: "gh\u00001",
            latest: accepted("saved", 1),
            merged: 3,
            quietLeftMs,
            maxLeftMs,
          });
          clock.increment(10_000);
        }, mode);
      expect(run(2_000, 2_000)).toEqual(["max_wait"]);
      expect(run(1_000, 2_000)).toEqual(["quiet_window"]);
      expect(run(3_000, 2_000)).toEqual(["max_wait"]);
    },
  );

  it.each<Mode>(["light", "actor"])(
    "a new %s group whose quiet window equals its max wait fires as max_wait",
    (mode) => {
      const route: Route = {
        ...ROUTE,
        coalesce: { key: "pull_request.number", window_seconds: 30, max_wait_seconds: 30 },
      };
      expect(
        reasons((coalescer, clock) => {
          coalescer.offer(accepted("only", 1, route));
          clock.increment(30_000);
        }, mode),
      ).toEqual(["max_wait"]);
    },
  );
});

describe("under --inspect a group reopened at a start is a coalesceGroup actor", () => {
  it("named as a new group is, with its saved count, firing after what is left of its quiet window", () => {
    const clock = new SimulatedClock();
    const merged = new Map<string, unknown>();
    const parent = createActor(
      fromCallback(() => {}),
      {
        clock,
        inspect: (event) => {
          const id = (event.actorRef as AnyActorRef).id;
          if (event.type === "@xstate.snapshot" && id.startsWith("coalesce-"))
            merged.set(id, (event.snapshot as unknown as { context: { merged: number } }).context.merged);
        },
      },
    ).start();
    const fired: Array<{ id: string; superseded: number }> = [];
    const coalescer = createCoalescer({
      dispatch: (event, superseded) => fired.push({ id: event.deliveryId, superseded }),
      clock,
      parent,
    });
    coalescer.restore({
      id: "gh\u00001",
      latest: accepted("saved", 1),
      merged: 3,
      quietLeftMs: 10_000,
      maxLeftMs: 100_000,
    });
    expect([...merged]).toEqual([["coalesce-1:gh:1", 3]]);
    clock.increment(9_999);
    coalescer.offer(accepted("later", 1));
    expect(merged.get("coalesce-1:gh:1")).toBe(4);
    // The offer restarted the whole quiet window (30 s), not what was left of it.
    clock.increment(29_999);
    expect(fired).toEqual([]);
    clock.increment(1);
    expect(fired).toEqual([{ id: "later", superseded: 3 }]);
  });
});

describe("light groups follow the coalesceGroup machine", () => {
  type Step = { kind: "offer"; pr: number } | { kind: "wait"; ms: number } | { kind: "flush" };
  const step = fc.oneof(
    fc.record({ kind: fc.constant("offer" as const), pr: fc.integer({ min: 0, max: 3 }) }),
    fc.record({ kind: fc.constant("wait" as const), ms: fc.integer({ min: 0, max: 40_000 }) }),
    fc.constant({ kind: "flush" as const }),
  );

  function replay(mode: Mode, steps: readonly Step[]) {
    const { clock, fired, coalescer } = harness(mode);
    const route: Route = {
      ...ROUTE,
      coalesce: { key: "pull_request.number", window_seconds: 10, max_wait_seconds: 35 },
    };
    const answers: string[] = [];
    steps.forEach((s, i) => {
      if (s.kind === "offer") answers.push(JSON.stringify(coalescer.offer(accepted(`s${i}`, s.pr, route))));
      else if (s.kind === "wait") clock.increment(s.ms);
      else coalescer.flushAll();
      answers.push(`pending=${coalescer.pendingCount()} fired=${JSON.stringify(fired)}`);
    });
    return answers;
  }

  it("same answers, same dispatches at the same moments, for random schedules", () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
        expect(replay("light", steps)).toEqual(replay("actor", steps));
      }),
      { numRuns: 200 },
    );
  });
});

describe("coalesce note", () => {
  it("names how many events the run covers and how many were superseded", () => {
    expect(coalesceNote(2)).toBe(
      "[Coalesced: this run covers 3 events; 2 earlier events for this key were superseded]",
    );
    expect(coalesceNote(1)).toBe(
      "[Coalesced: this run covers 2 events; 1 earlier event for this key was superseded]",
    );
  });

  it("is prefixed to the prompt only when events merged", () => {
    const event = accepted("d", 1);
    expect(withCoalesceNote(event, 0)).toBe(event);
    expect(withCoalesceNote(event, 3).prompt).toBe(`${coalesceNote(3)}\n\nPR 1 (d)`);
  });
});

describe("windows longer than a JS timer can hold (2^31-1 ms, ~24.8 days)", () => {
  const DAY = 86_400;
  const longRoute: Route = {
    ...ROUTE,
    coalesce: { key: "pull_request.number", window_seconds: 30 * DAY, max_wait_seconds: 60 * DAY },
  };

  it.each<"light" | "actor">(["light", "actor"])(
    "a 30-day window does not fire at once on the platform's timers (%s groups)",
    (mode) => {
      // vitest's fake timers behave like Node's: a delay above 2^31-1 ms becomes 1 ms.
      vi.useFakeTimers();
      try {
        const fired: string[] = [];
        const parent =
          mode === "actor"
            ? createActor(
                fromCallback(() => {}),
                {},
              ).start()
            : undefined;
        const coalescer = createCoalescer({
          dispatch: (event) => fired.push(event.deliveryId),
          ...(parent === undefined ? {} : { parent }),
        });
        expect(coalescer.offer(accepted("long", 1, longRoute))).toBe("coalesced");
        vi.advanceTimersByTime(60_000);
        expect(fired).toEqual([]);
        expect(coalescer.pendingCount()).toBe(1);
        vi.advanceTimersByTime(30 * DAY * 1000);
        expect(fired).toEqual(["long"]);
      } finally {
        vi.useRealTimers();
      }
    },
  );

  it("a group reopened after a restart with months of its windows left does not fire at once", () => {
    vi.useFakeTimers();
    try {
      const fired: string[] = [];
      const coalescer = createCoalescer({ dispatch: (event) => fired.push(event.deliveryId) });
      coalescer.restore({
        id: "gh\u00001",
        latest: accepted("reopened", 1, longRoute),
        merged: 2,
        quietLeftMs: 29 * DAY * 1000,
        maxLeftMs: 59 * DAY * 1000,
      });
      vi.advanceTimersByTime(60_000);
      expect(fired).toEqual([]);
      expect(coalescer.pendingCount()).toBe(1);
      vi.advanceTimersByTime(25 * DAY * 1000);
      expect(fired).toEqual(["reopened"]);
    } finally {
      vi.useRealTimers();
    }
  });
});
