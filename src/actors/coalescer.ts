import { type AnyActorRef, createActor, fromCallback } from "xstate";
import { DEFAULT_PROFILE } from "../config/paths.js";
import { MAX_TIMER_MS } from "../config/timerSeconds.js";
import type { Logger } from "../io/log.js";
import {
  type CoalesceGroupOutput,
  coalesceGroupMachine,
  LAST_DISPATCHED_MS,
  renderCoalesceKey,
  timerDelay,
} from "../machines/coalesceGroup.js";
import { type AcceptedEvent, type Coalesced, renderedOnly } from "../streams/context.js";

/** The timer interface of XState's clock, so tests pass a `SimulatedClock`. */
export interface TimerClock {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(id: unknown): void;
}

export interface CoalescerOptions {
  /** Called once per group when it fires, with the latest event and how many earlier ones it replaced. */
  dispatch(event: AcceptedEvent, superseded: number): void;
  /**
   * When set (the gateway under `--inspect`), groups run as real `coalesceGroup` actors in this actor's
   * system, visible in the inspector, up to `actorGroupLimit` at a time (default 1000: an actor costs
   * ~5 KB and XState's scheduler cancels timers in O(all timers)). Other groups are light records
   * driven by `clock` with the same transitions (~1 KB each; docs/coalescing-and-cron.md).
   */
  readonly parent?: AnyActorRef | (() => AnyActorRef);
  readonly actorGroupLimit?: number;
  readonly clock?: TimerClock;
  readonly logger?: Logger;
  /** Told each group's state as it changes, so a state store can keep it across a restart. */
  readonly observer?: CoalesceObserver;
  /** Pending groups at most; past it an event whose key opens no existing group is not grouped (default `COALESCE_GROUP_CAP`). */
  readonly maxGroups?: number;
  /**
   * The clock that is never set (`Clock.elapsed`), on which the keys' memories of their fired groups
   * (`LastDispatched`) lapse (default `performance.now`).
   */
  readonly elapsed?: () => number;
}

/**
 * Pending groups at most, as many as runs may wait (`RUN_QUEUE_CAP`). The keys are rendered from payloads,
 * so a sender posting a new key each time opens a group each time, kept for up to `max_wait_seconds`: past
 * the cap such an event is dispatched at once, as one whose key does not resolve (its run then meets the
 * run queue's cap, 503 when full), while events for a pending group still join it.
 */
export const COALESCE_GROUP_CAP = 100_000;

export interface CoalesceObserver {
  /**
   * `offered` opened (`merged` 1) or joined group `id`; `latest` is the event the group would dispatch:
   * `offered`, or a newer event when `offered` was received before it (a slow script let it pass). Told before
   * the group takes `offered` in: when it throws (a record that cannot be written), no group is opened or
   * changed, and `offer` or `offerRetired` throws it on. `restore` tells it after it merged a saved group,
   * whose events were both recorded before.
   */
  updated(id: string, latest: AcceptedEvent, merged: number, offered: AcceptedEvent): void;
  /** Group `id` fired; its dispatch follows. */
  fired(id: string): void;
  /**
   * `offered` was received before the event the last group `id` dispatched (its script ended after that
   * group fired): it is counted as superseded, and opens no group.
   */
  superseded?(id: string, offered: AcceptedEvent): void;
  /**
   * Group `id` ended without a run: each of its events was answered 503 (`Coalescer.withdraw`), and
   * `refused` names them, whose ids the sender's retry takes anew. Without it, `fired` is told.
   */
  ended?(id: string, refused: ReadonlyArray<Pick<AcceptedEvent, "routeName" | "deliveryId">>): void;
}

/** A group kept across a restart: what is left of its windows decides when it fires. */
export interface RestoredGroup {
  readonly id: string;
  readonly latest: AcceptedEvent;
  readonly merged: number;
  /** Milliseconds left of the quiet window and of the max wait (0: fire now). */
  readonly quietLeftMs: number;
  readonly maxLeftMs: number;
  /**
   * Its route no longer coalesces and an event of that route is about to run: the group fires before
   * `restore` returns, so its run is queued ahead of that event's (otherwise on the next tick).
   */
  readonly firesNow?: boolean;
}

export interface Coalescer {
  /**
   * `coalesced` when the event joined or opened a group; `{supersededBy}` when a run its key's group already
   * dispatched was of an event received after it (it joins no group, and never runs); `not_grouped` when the
   * route has no coalesce or the key did not resolve.
   */
  offer(event: AcceptedEvent): Coalesced;
  /**
   * `offer` for an event whose route a reload retired while it was in the pipeline (the reload flushed the
   * groups): it opens no group, which would keep the replaced route's windows past the reload. It joins the
   * group the reloaded route opened for its key since (`coalesced`), is counted superseded (`{supersededBy}`:
   * it never runs) when a run its key's group already dispatched, or another such event run at once, was of
   * an event received after it, and is `not_grouped` otherwise: it runs at once. Its key remembers it only
   * once the run queue has taken its run (`retiredQueued`).
   */
  offerRetired(event: AcceptedEvent): Coalesced;
  /**
   * The run queue took the run of `event`, which `offerRetired` answered `not_grouped`, in the same turn: its
   * key remembers it as a fired group's event, so an earlier event of the key reaching the coalescer after it
   * is superseded by that run rather than run after it. Not called when the queue refused it (503, full), so
   * a run never made supersedes nothing.
   */
  retiredQueued(event: AcceptedEvent): void;
  /**
   * `event` was answered 503 after all (its record could not be made durable): the sender retries it. One
   * `offer` grouped: its group no longer counts it, and a group left with no event answered 202 ends
   * without a run — nothing is owed to a sender told to retry, and the retry would run it a second time.
   * One counted superseded: the key's next group does not count it. One `retiredQueued` remembered (its run
   * is withdrawn): the key's memory is what it was before, so it supersedes nothing; of two runs of a key
   * withdrawn (in either order), the memory before both.
   */
  withdraw(event: AcceptedEvent): void;
  /**
   * `event`'s record is durable (answered 202 for good): a run `retiredQueued` remembered of it is withdrawn no
   * more, so its key forgets what it would give back, and that of its key's older retired runs (their
   * withdrawal could no longer change the key's memory).
   */
  kept(event: AcceptedEvent): void;
  /** Dispatches every pending group now (adapter stop or reload); returns how many fired. */
  flushAll(): number;
  pendingCount(): number;
  /** The event each pending group would dispatch now (note included), without firing it (a stop's first save). */
  pendingEvents(): AcceptedEvent[];
  /**
   * Reopens a group saved before a restart (at startup). A group a request opened meanwhile for the same
   * key takes the saved events in (one group, one run), instead of the saved one being dropped; when that
   * group fired already, its run superseded the saved events, and the saved group ends without a run
   * (`observer.superseded` for its latest event, then `observer.fired`), counted by the key's next group.
   */
  restore(group: RestoredGroup): void;
}

interface Group {
  /** `again`: the sender's retry of an event it holds that was answered 503, already counted among its events. */
  offer(event: AcceptedEvent, again: boolean): void;
  flush(): void;
  /** Ends the group without dispatching: its events were taken into another (`restore`). */
  discard(): void;
  /** One of its events was answered 503 (`Coalescer.withdraw`): true when none it holds is owed a run now. */
  withdraw(): boolean;
  /** The latest event and how many earlier ones it replaced so far. */
  peek(): { latest: AcceptedEvent; superseded: number };
}

const REAL_CLOCK: TimerClock = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (id) => clearTimeout(id as NodeJS.Timeout),
};

/**
 * The id of a coalescing group of `state.backend: local` (also its journal record's): `<route>\u0000<key>`
 * for a route of the default profile, `<route>@<profile>\u0000<key>` for one bound to a named profile, so
 * that a route's events accepted under two profiles (a subscription moved by `svc webhook subscribe
 * --route-profile`, which no reload follows) are two groups, each run as the profile it was accepted for.
 * A route name has no `@` and neither it nor a profile name a NUL, so the first NUL ends the owner and no
 * id is another's. The default profile's id is the one it always had, so its groups journaled by an
 * earlier version are found again (a named profile's are renamed as they are reopened: `currentGroupId`).
 */
export function localGroupId(routeName: string, profile: string, key: string): string {
  return `${groupOwner(routeName, profile)}\u0000${key}`;
}

/** `<route>`, or `<route>@<profile>` for a named profile: the group id's part before its first NUL. */
const groupOwner = (routeName: string, profile: string) =>
  profile === DEFAULT_PROFILE ? routeName : `${routeName}@${profile}`;

/**
 * The id a group journaled as `id` is kept under now: a version before the profile was in the id wrote
 * `<route>\u0000<key>` for a named profile's group too, which becomes `<route>@<profile>\u0000<key>`, so the
 * profile's next event for that key joins it. Any other id (the default profile's, one written with its
 * profile, a held group's alias starting with a NUL) is its own.
 */
export function currentGroupId(id: string, routeName: string, profile: string): string {
  const prefix = `${routeName}\u0000`;
  if (profile === DEFAULT_PROFILE || !id.startsWith(prefix)) return id;
  return localGroupId(routeName, profile, id.slice(prefix.length));
}

/**
 * The entries of retired runs' chains made, visited and dropped so far (every coalescer of the process): a
 * unit test pins that it grows with the runs, not with their square.
 */
let retiredSteps = 0;
export const retiredRunSteps = (): number => retiredSteps;

/** A retired event's run, by its route, profile and delivery id (a route and a profile name have no NUL). */
const retiredKey = (event: AcceptedEvent) =>
  `${event.routeName}\u0000${event.profile}\u0000${event.deliveryId}`;

/** The rendered key a group id names (after its first NUL). */
const keyOfGroupId = (id: string) => id.slice(id.indexOf("\u0000") + 1);

/**
 * What a key remembers of its group that fired last: the event the group dispatched was received then, and an
 * event received before it that reaches the coalescer afterwards (its body came in slowly, it waited for a
 * script slot, its script was slower) was superseded by that run. Kept until `until` (the clock that is never
 * set): `LAST_DISPATCHED_MS` after the fire, far past the longest such an event can still be on its way.
 */
interface LastDispatched {
  readonly receivedAt: number;
  /** Undefined for an event received before this process started (a group restored from the journal). */
  readonly receivedTick: number | undefined;
  /** When the group fired (the clock that is never set): an event received since came after its run. */
  readonly firedTick: number;
  /** The delivery id of the event the group dispatched. */
  readonly deliveryId: string;
  readonly until: number;
  /**
   * Events that came late since, not yet counted by a group: the key's next group counts them superseded.
   * Passed on to the memory of an event `offerRetired` runs at once (that run is no group's, and counts none).
   */
  readonly late: { count: number };
  /** False for an event `offerRetired` ran at once: its run was no group's. */
  readonly grouped: boolean;
}

/** A memory `Coalescer.retiredQueued` made: its key, that memory, and the one it replaced. */
interface RetiredRun {
  readonly id: string;
  /** Its event's route, profile and delivery id (`retiredKey`). */
  readonly retiredKey: string;
  readonly mine: LastDispatched;
  /** Relinked past a run of the key withdrawn while this one's memory had replaced its. */
  previous: LastDispatched | undefined;
}

/**
 * Whether `event` was received before the event `last` remembers (in the same millisecond: not before). One
 * this process received is told by the clock that is never set: received once the group fired, it came after
 * that run, and the event of a group restored after a restart (no tick) came before it, whatever the system
 * clock said of either (set back while the gateway was down, it gives every newer event an earlier time).
 */
function receivedBefore(event: AcceptedEvent, last: LastDispatched): boolean {
  const tick = event.receivedTick;
  if (tick === undefined) return wholeMs(event.receivedAt) < wholeMs(last.receivedAt);
  if (tick >= last.firedTick || last.receivedTick === undefined) return false;
  return wholeMs(tick) < wholeMs(last.receivedTick);
}

/**
 * The millisecond a receive time falls in: the clock that is never set reads fractions of one, and two events
 * received in the same millisecond are ordered by when they reach the coalescer, not by those fractions.
 */
const wholeMs = Math.floor;

/** The first line of a coalesced run's prompt (only when more than one event merged). */
export function coalesceNote(superseded: number): string {
  const covered = superseded + 1;
  return `[Coalesced: this run covers ${covered} events; ${superseded} earlier ${superseded === 1 ? "event" : "events"} for this key ${superseded === 1 ? "was" : "were"} superseded]`;
}

/** The event a group dispatches: the latest one, its prompt prefixed with the note when events merged. */
export function withCoalesceNote(event: AcceptedEvent, superseded: number): AcceptedEvent {
  return superseded === 0 ? event : { ...event, prompt: `${coalesceNote(superseded)}\n\n${event.prompt}` };
}

/**
 * The group's latest event after `next` joined it: `next`, unless it was received before `current`
 * (a slow script let a newer request pass it); in the same millisecond, the one offered last.
 */
function newer(current: AcceptedEvent, next: AcceptedEvent): AcceptedEvent {
  // Told apart on the clock that is never set when both were received by this process: a system clock
  // set back between them (NTP) would make the newer look older and keep the stale event.
  const was = current.receivedTick;
  const is = next.receivedTick;
  if (was !== undefined && is !== undefined) return wholeMs(is) < wholeMs(was) ? current : next;
  // One received by this process, the other saved before it started (a restored group's): the one received
  // here is the newer, whatever the system clock said (set back while the gateway was down, it gives it the
  // earlier time).
  if (is !== undefined) return next;
  if (was !== undefined) return current;
  return wholeMs(next.receivedAt) < wholeMs(current.receivedAt) ? current : next;
}

/**
 * A light group: the machine's transitions (quiet timer restarts on offer, max wait does not) on two
 * timers. A class, so 100,000 groups share their methods instead of holding five closures each.
 */
class LightGroup implements Group {
  private finished = false;
  private quiet: unknown;
  private readonly max: unknown;
  /** Its events not withdrawn (answered 202): a group that owes none ends without a run. */
  private owed: number;

  constructor(
    private latest: AcceptedEvent,
    private readonly quietMs: number,
    maxMs: number,
    private readonly clock: TimerClock,
    private readonly done: (output: CoalesceGroupOutput) => void,
    // A restored group starts with its count and what is left of its quiet window.
    private merged = 1,
    firstQuietMs = quietMs,
    // A restored group one of whose bounds passed meanwhile: fired at once, for the bound that ended first.
    overdue?: CoalesceGroupOutput["reason"],
  ) {
    this.owed = merged;
    if (overdue !== undefined) {
      // One timer: two due at once on Node's timers run in no order a reason could be told by.
      this.max = clock.setTimeout(() => this.fire(overdue), 0);
      return;
    }
    // The max wait's timer first: when both end at once it fires first, and the group's reason is max_wait.
    this.max = clock.setTimeout(() => this.fire("max_wait"), maxMs);
    this.quiet = clock.setTimeout(() => this.fire("quiet_window"), firstQuietMs);
  }

  offer(event: AcceptedEvent, again: boolean): void {
    if (this.finished) return;
    this.latest = newer(this.latest, event);
    if (!again) this.merged += 1;
    this.owed += 1;
    this.clock.clearTimeout(this.quiet);
    this.quiet = this.clock.setTimeout(() => this.fire("quiet_window"), this.quietMs);
  }

  flush(): void {
    this.fire("flush");
  }

  discard(): void {
    this.finished = true;
    this.clock.clearTimeout(this.quiet);
    this.clock.clearTimeout(this.max);
  }

  peek(): { latest: AcceptedEvent; superseded: number } {
    return { latest: this.latest, superseded: this.merged - 1 };
  }

  withdraw(): boolean {
    if (this.finished) return false;
    this.owed -= 1;
    if (this.owed > 0) return false;
    this.discard();
    return true;
  }

  private fire(reason: CoalesceGroupOutput["reason"]): void {
    if (this.finished) return;
    this.finished = true;
    this.clock.clearTimeout(this.quiet);
    this.clock.clearTimeout(this.max);
    this.done({ item: this.latest, superseded: this.merged - 1, reason });
  }
}

/** A group reopened at a start: its events so far and what is left of its quiet window. */
interface Reopened {
  readonly merged: number;
  readonly quietLeftMs: number;
}

function actorGroup(
  id: string,
  first: AcceptedEvent,
  quietMs: number,
  maxMs: number,
  parent: AnyActorRef,
  done: (o: CoalesceGroupOutput) => void,
  reopened?: Reopened,
): Group {
  const actor = createActor(coalesceGroupMachine, {
    parent,
    id,
    input: { item: first, quietWindowMs: quietMs, maxWaitMs: maxMs, ...reopened },
  });
  let discarded = false;
  actor.subscribe({
    complete: () => {
      // A stopped actor completes too (system shutdown); only a group that reached `dispatched` fires.
      const snapshot = actor.getSnapshot();
      if (snapshot.status === "done" && !discarded) done(snapshot.output as CoalesceGroupOutput);
    },
  });
  actor.start();
  let latest = first;
  let owed = reopened?.merged ?? 1;
  const discard = () => {
    discarded = true;
    actor.send({ type: "flush" });
  };
  return {
    offer: (event, again) => {
      latest = newer(latest, event);
      owed += 1;
      actor.send({ type: "offer", item: latest, again });
    },
    flush: () => actor.send({ type: "flush" }),
    // A child actor cannot be stopped from here: it ends as a flush does, and dispatches nothing.
    discard,
    withdraw: () => {
      if (discarded || actor.getSnapshot().status !== "active") return false;
      owed -= 1;
      if (owed > 0) return false;
      discard();
      return true;
    },
    peek: () => ({ latest, superseded: actor.getSnapshot().context.merged - 1 }),
  };
}

/** One coalescing group per (route, profile, rendered key); a fired group is removed at once. */
export function createCoalescer(options: CoalescerOptions): Coalescer {
  const groups = new Map<string, Group>();
  /** The group each offered event joined (by the event object the pipeline holds), for `withdraw`. */
  const joined = new WeakMap<AcceptedEvent, { readonly id: string; readonly group: Group }>();
  /** The events withdrawn from a group still pending (made only when one is: a 503 on a full disk). */
  const refusedOf = new WeakMap<Group, Array<Pick<AcceptedEvent, "routeName" | "deliveryId">>>();
  const clock = options.clock ?? REAL_CLOCK;
  const actorLimit = options.parent === undefined ? 0 : (options.actorGroupLimit ?? 1000);
  const actorGroups = new Set<string>();
  const maxGroups = options.maxGroups ?? COALESCE_GROUP_CAP;
  /** Whether the cap's warning was given since the groups last fell below it (once per time it is reached). */
  let warnedFull = false;
  let seq = 0;
  const elapsed = options.elapsed ?? (() => performance.now());
  /**
   * Per group id whose last group fired, what it dispatched, in the order they fired (at most `maxGroups`, the
   * oldest forgotten first; each lapses `LAST_DISPATCHED_MS` after its fire).
   */
  const lastDispatched = new Map<string, LastDispatched>();
  /** A group's late events carried from its key's `lastDispatched`: counted superseded beside its own. */
  const carriedOf = new WeakMap<Group, number>();
  /** The key each late event was counted under (by the event object the pipeline holds), for `withdraw`. */
  const lateOf = new WeakMap<AcceptedEvent, { readonly id: string; readonly late: LastDispatched["late"] }>();
  /** The key of each event `offerRetired` answered `not_grouped`, until the run queue takes it (`retiredQueued`). */
  const retiredIds = new WeakMap<AcceptedEvent, string>();
  /**
   * The memories `retiredQueued` made that still stand, with the one each replaced, by the event's route,
   * profile and delivery id (`withdraw` is given a copy of the event without its payload): a run withdrawn
   * after all (its record not durable) gives the key its previous memory back. One stands while it is the
   * key's memory or the one a standing run's replaced (two runs of a key whose records failed in one batch),
   * until its record is durable (`kept`).
   */
  const retiredRuns = new Map<string, RetiredRun>();
  /**
   * The standing entries of `retiredRuns` per key, oldest first: each one's `previous` is the memory of the
   * one before it (the key's chain, from its memory down). Only runs whose records are not yet known durable.
   */
  const retiredChains = new Map<string, RetiredRun[]>();
  /** Drops the first `count` entries of the key's chain (all of them by default). */
  function dropRetired(id: string, count?: number): void {
    const chain = retiredChains.get(id);
    if (chain === undefined) return;
    const dropped = count === undefined ? chain.splice(0) : chain.splice(0, count);
    retiredSteps += dropped.length;
    for (const ran of dropped) retiredRuns.delete(ran.retiredKey);
    if (chain.length === 0) retiredChains.delete(id);
  }
  /** The latest event of `group` and how many earlier ones it replaced, its carried late events included. */
  const peek = (group: Group) => {
    const { latest, superseded } = group.peek();
    return { latest, superseded: superseded + (carriedOf.get(group) ?? 0) };
  };
  /** Drops the memories lapsed by `now`, from the oldest (they lapse in the order they were made). */
  function lapse(now: number): void {
    for (const [key, last] of lastDispatched) {
      if (last.until > now) break;
      lastDispatched.delete(key);
    }
  }
  /** `lastDispatched[id]` while it lasts. */
  function lastOf(id: string): LastDispatched | undefined {
    if (lastDispatched.size === 0) return undefined;
    const now = elapsed();
    lapse(now);
    const last = lastDispatched.get(id);
    if (last === undefined || last.until > now) return last;
    lastDispatched.delete(id);
    return undefined;
  }
  /**
   * Remembers what group `id` dispatched (or the event `offerRetired` runs at once), for an earlier event of
   * its key still on its way; `late`: the events that came late before it, not yet counted by a group.
   */
  function remember(id: string, latest: AcceptedEvent, late = { count: 0 }, grouped = true): LastDispatched {
    const now = elapsed();
    lapse(now);
    lastDispatched.delete(id);
    if (lastDispatched.size >= maxGroups) {
      const oldest = lastDispatched.keys().next();
      if (oldest.done !== true) lastDispatched.delete(oldest.value);
    }
    const last: LastDispatched = {
      receivedAt: latest.receivedAt,
      receivedTick: latest.receivedTick,
      firedTick: now,
      deliveryId: latest.deliveryId,
      until: now + LAST_DISPATCHED_MS,
      late,
      grouped,
    };
    lastDispatched.set(id, last);
    return last;
  }
  /**
   * A group as a `coalesceGroup` actor under `options.parent`, named `coalesce-<n>:<route>:<key>`
   * (`coalesce-<n>:<route>@<profile>:<key>` for a named profile).
   */
  function newActorGroup(
    parent: AnyActorRef | (() => AnyActorRef),
    id: string,
    owner: string,
    key: string,
    first: AcceptedEvent,
    quietMs: number,
    maxMs: number,
    reopened?: Reopened,
  ): Group {
    actorGroups.add(id);
    return actorGroup(
      `coalesce-${seq}:${owner}:${key}`,
      first,
      quietMs,
      maxMs,
      typeof parent === "function" ? parent() : parent,
      (output) => fired(id, output),
      reopened,
    );
  }
  function fired(id: string, output: CoalesceGroupOutput): void {
    const group = groups.get(id);
    const superseded = output.superseded + (group === undefined ? 0 : (carriedOf.get(group) ?? 0));
    groups.delete(id);
    actorGroups.delete(id);
    const latest = output.item as AcceptedEvent;
    options.logger?.info(
      {
        route: latest.routeName,
        delivery_id: latest.deliveryId,
        superseded,
        reason: output.reason,
      },
      `[webhook] ${latest.routeName}: coalesced group dispatched`,
    );
    // The run first, then that the group fired: a journal batch torn before the run's record (a power cut
    // before its sync) keeps the group, which fires again, never the group's end without its run; one torn
    // between the two keeps the run, and the next start does not reopen the group (GatewayState.resume).
    options.dispatch(latest, superseded);
    options.observer?.fired(id);
    remember(id, latest);
  }
  /**
   * `event` joins the pending group `id`. The group's record comes first: one that throws (a record longer than
   * any JSON text) leaves the group as it was, so an event its request answers 500 never becomes the event it
   * runs, nor is counted by it.
   */
  function join(id: string, existing: Group, event: AcceptedEvent): void {
    // The sender's retry of an event of this group answered 503: the same event, counted once.
    const refused = refusedOf.get(existing);
    const retried = refused?.findIndex((r) => r.deliveryId === event.deliveryId) ?? -1;
    const offered = renderedOnly(event);
    if (options.observer !== undefined) {
      // What the group holds once it takes the event in (`Group.offer`): the newer latest, one more merged.
      const { latest, superseded } = peek(existing);
      options.observer.updated(id, newer(latest, offered), superseded + (retried === -1 ? 2 : 1), event);
    }
    if (retried !== -1) refused?.splice(retried, 1);
    existing.offer(offered, retried !== -1);
    joined.set(event, { id, group: existing });
  }
  /** `event`, superseded by the run `last` remembers with no group pending for its key: the key's next group counts it. */
  function countLate(id: string, last: LastDispatched, event: AcceptedEvent): void {
    last.late.count += 1;
    lateOf.set(event, { id, late: last.late });
    const dispatched = last.grouped
      ? "whose group fired"
      : "whose run (its own, a reload having kept it from grouping) was dispatched";
    options.logger?.info(
      { route: event.routeName, delivery_id: event.deliveryId, superseded_by: last.deliveryId },
      `[webhook] ${event.routeName}: coalesced event superseded by a run already dispatched — it was received before that run's event (${last.deliveryId}), ${dispatched} before this one was through the pipeline; the key's next group counts it`,
    );
    options.observer?.superseded?.(id, event);
  }
  /**
   * Whether the key of the saved group `saved` has no group pending and its last group, fired since this
   * start, dispatched an event received after the saved group's latest: a request the listener passed on
   * before the group was reopened, whose group fired at once (`window_seconds: 0` or `max_wait_seconds: 0`). That run
   * superseded the saved events, as it does an event that reaches the coalescer late (`countLate`): reopened,
   * the saved group would run its older event after the newer one. It is ended (its record too, so no later
   * start reopens it), and the key's next group counts its events among those superseded.
   */
  function supersededAtRestore(saved: RestoredGroup): boolean {
    if (groups.has(saved.id)) return false;
    const last = lastOf(saved.id);
    if (last === undefined) return false;
    // An event this process received is newer than any saved before it started, whatever the system clock
    // says; a run of a group restored earlier is compared by receive time.
    const older =
      last.receivedTick !== undefined || wholeMs(saved.latest.receivedAt) < wholeMs(last.receivedAt);
    if (!older) return false;
    last.late.count += saved.merged;
    const route = saved.latest.routeName;
    options.logger?.info(
      { route, delivery_id: saved.latest.deliveryId, superseded_by: last.deliveryId, events: saved.merged },
      `[webhook] ${route}: saved coalescing group superseded by a run already dispatched — its latest event (${saved.latest.deliveryId}) was received before that run's event (${last.deliveryId}), whose group a request opened and fired before this one was reopened from the journal; the key's next group counts its ${saved.merged === 1 ? "event" : `${saved.merged} events`}`,
    );
    options.observer?.superseded?.(saved.id, saved.latest);
    options.observer?.fired(saved.id);
    return true;
  }
  /**
   * What `event`'s key decides already: not grouped (the route does not coalesce, or its key does not resolve —
   * said at DEBUG when `sayUnresolved`), coalesced into the key's pending group, or superseded by the key's last
   * run: received before that run's event and here only now (a slow body, a wait for a script slot, a slower
   * script), run now it would act on older data after the newer, grouped it would run alone, after it. Else the
   * key, its group id and its last run, for the caller to open a group or run it at once.
   */
  function byKey(
    event: AcceptedEvent,
    sayUnresolved: boolean,
  ):
    | Coalesced
    | {
        id: string;
        key: string;
        last: LastDispatched | undefined;
        policy: NonNullable<AcceptedEvent["route"]["coalesce"]>;
      } {
    const policy = event.route.coalesce;
    if (policy === undefined) return "not_grouped";
    const key = renderCoalesceKey(policy.key, event.payload, event.event);
    if (key === undefined) {
      if (sayUnresolved)
        options.logger?.debug(
          `[webhook] ${event.routeName}: coalesce key ${policy.key} did not resolve; dispatched at once`,
        );
      return "not_grouped";
    }
    const id = localGroupId(event.routeName, event.profile, key);
    const existing = groups.get(id);
    if (existing !== undefined) {
      join(id, existing, event);
      return "coalesced";
    }
    const last = lastOf(id);
    if (last !== undefined && receivedBefore(event, last)) {
      countLate(id, last, event);
      return { supersededBy: last.deliveryId };
    }
    return { id, key, last, policy };
  }
  return {
    offer(event) {
      const found = byKey(event, true);
      if (typeof found === "string" || !("id" in found)) return found;
      const { id, key, last, policy } = found;
      if (groups.size >= maxGroups) {
        if (!warnedFull) {
          warnedFull = true;
          options.logger?.warn(
            { route: event.routeName },
            `[webhook] ${event.routeName}: ${maxGroups} coalescing groups are pending, the most kept at once; an event whose key opens a new group is dispatched at once (not grouped) until some fire — a sender posting ever new coalesce keys?`,
          );
        }
        return "not_grouped";
      }
      warnedFull = false;
      const first = renderedOnly(event);
      // The events that came late since the key's last group fired are counted by this one.
      const carried = last?.late.count ?? 0;
      // The group's record before the group: one that throws (a record longer than any JSON text, its request
      // answered 500) opens none, whose timers would run that event.
      options.observer?.updated(id, first, 1 + carried, event);
      if (last !== undefined) last.late.count = 0;
      const quietMs = timerDelay(policy.window_seconds * 1000);
      const maxMs = timerDelay(policy.max_wait_seconds * 1000);
      seq += 1;
      let group: Group;
      if (options.parent !== undefined && actorGroups.size < actorLimit) {
        group = newActorGroup(
          options.parent,
          id,
          groupOwner(event.routeName, event.profile),
          key,
          first,
          quietMs,
          maxMs,
        );
      } else {
        group = new LightGroup(first, quietMs, maxMs, clock, (output) => fired(id, output));
      }
      groups.set(id, group);
      joined.set(event, { id, group });
      if (carried > 0) carriedOf.set(group, carried);
      return "coalesced";
    },
    offerRetired(event) {
      // A group the reloaded route opened for its key since takes it in, whether it came before or after
      // that group's events (its latest stays the newest): run at once, it would act on its payload before
      // the group's run, of an older event when one of those came before it.
      const found = byKey(event, false);
      if (typeof found === "string" || !("id" in found)) return found;
      const { id } = found;
      // It runs at once, once the run queue takes it: remembered then (`retiredQueued`, in this turn).
      retiredIds.set(event, id);
      return "not_grouped";
    },
    retiredQueued(event) {
      const id = retiredIds.get(event);
      if (id === undefined) return;
      retiredIds.delete(event);
      // Remembered as a fired group's event is, so an earlier event of its key still on its way (retired too,
      // or a body still coming in) is superseded by this run rather than run after it; the key's late events
      // not yet counted are passed on.
      const previous = lastOf(id);
      const mine = remember(id, event, previous?.late, false);
      // The key's chain stands while its newest run's memory is the one this replaces; otherwise (a group's
      // run replaced it, or it lapsed) none of it does, and a run no longer standing is not withdrawn.
      const chain = retiredChains.get(id);
      if (chain !== undefined && (previous === undefined || chain[chain.length - 1]?.mine !== previous))
        dropRetired(id);
      const ran: RetiredRun = { id, mine, previous, retiredKey: retiredKey(event) };
      retiredRuns.set(ran.retiredKey, ran);
      const kept = retiredChains.get(id);
      if (kept === undefined) retiredChains.set(id, [ran]);
      else kept.push(ran);
      retiredSteps += 1;
    },
    kept(event) {
      if (retiredRuns.size === 0) return;
      const ran = retiredRuns.get(retiredKey(event));
      if (ran === undefined) return;
      // Never withdrawn now: nor can an older run of its key give the key a memory back past this one's.
      const chain = retiredChains.get(ran.id) ?? [];
      dropRetired(ran.id, chain.indexOf(ran) + 1);
    },
    withdraw(event) {
      if (retiredRuns.size > 0) {
        const key = retiredKey(event);
        const ran = retiredRuns.get(key);
        if (ran !== undefined) {
          retiredRuns.delete(key);
          const chain = retiredChains.get(ran.id) ?? [];
          const at = chain.indexOf(ran);
          retiredSteps += at + 1;
          if (at >= 0) chain.splice(at, 1);
          if (chain.length === 0) retiredChains.delete(ran.id);
          // Its run is withdrawn: the key's memory is the one it replaced (its late events' box included).
          if (lastDispatched.get(ran.id) === ran.mine) {
            lastDispatched.delete(ran.id);
            if (ran.previous !== undefined && ran.previous.until > elapsed())
              lastDispatched.set(ran.id, ran.previous);
            return;
          }
          // A later retired run of the key replaced its memory: that run, withdrawn in turn, gives the key the
          // memory this one replaced, never this one's, whichever of the two is withdrawn first (their memories
          // share its late events' box). One a group's run replaced gives nothing back: that run was made.
          const later = chain[at];
          if (later !== undefined && later.previous === ran.mine) later.previous = ran.previous;
          return;
        }
      }
      const late = lateOf.get(event);
      if (late !== undefined) {
        lateOf.delete(event);
        // Not counted after all (unless a group took the count in meanwhile, or the key's memory lapsed).
        if (lastDispatched.get(late.id)?.late === late.late && late.late.count > 0) late.late.count -= 1;
        return;
      }
      const taken = joined.get(event);
      joined.delete(event);
      // Its group fired already (its run is under way), or a later group holds the key now: not this one's.
      if (taken === undefined || groups.get(taken.id) !== taken.group) return;
      const refused = refusedOf.get(taken.group) ?? [];
      refusedOf.set(taken.group, refused);
      refused.push({ routeName: event.routeName, deliveryId: event.deliveryId });
      if (!taken.group.withdraw()) return;
      groups.delete(taken.id);
      actorGroups.delete(taken.id);
      // Recorded as ended, its events' ids forgotten: a restart neither reopens the group (should its
      // record have reached the file) nor answers the sender's retry duplicate.
      if (options.observer?.ended !== undefined) options.observer.ended(taken.id, refused);
      else options.observer?.fired(taken.id);
      options.logger?.warn(
        { route: event.routeName, delivery_id: event.deliveryId },
        `[webhook] ${event.routeName}: coalescing group ended without a run — every event of it was answered 503 (its record could not be written), so the sender's retry runs it`,
      );
    },
    restore(saved) {
      if (supersededAtRestore(saved)) return;
      const policy = saved.latest.route.coalesce;
      if (policy === undefined) {
        // Its route no longer coalesces: no window is left to wait for, and the group's run is owed now,
        // as a reload that switched coalescing off flushes it (reason flush, not a bound that never ended).
        const group = new LightGroup(
          renderedOnly(saved.latest),
          MAX_TIMER_MS,
          MAX_TIMER_MS,
          clock,
          (output) => fired(saved.id, output),
          saved.merged,
        );
        groups.set(saved.id, group);
        if (saved.firesNow === true) group.flush();
        else clock.setTimeout(() => group.flush(), 0);
        return;
      }
      const quietMs = timerDelay(policy.window_seconds * 1000);
      const maxLeftMs = Math.max(0, saved.maxLeftMs);
      let latest = renderedOnly(saved.latest);
      let merged = saved.merged;
      let quietLeftMs = Math.max(0, saved.quietLeftMs);
      // A request for the same key can come in before the saved group is reopened (the listener opens
      // first: ingress threads pass requests on meanwhile, and taking in a pending-runs file waits for
      // the journal). Both are one group: the saved events are counted, its latest stays the newer one,
      // its quiet window is the new event's, and its max wait counts from the saved group's first event.
      const live = groups.get(saved.id);
      if (live !== undefined) {
        const { latest: newest, superseded } = peek(live);
        live.discard();
        actorGroups.delete(saved.id);
        latest = newer(latest, newest);
        merged += superseded + 1;
        quietLeftMs = quietMs;
      }
      // Which bound ends the group is judged on the times left before they are cut to 0 (both may have
      // passed during the restart): the one that ended first, max_wait when both ended at once.
      const quietEndsFirst = (live !== undefined ? quietMs : saved.quietLeftMs) < saved.maxLeftMs;
      const quietDelay = timerDelay(Math.min(quietLeftMs, maxLeftMs));
      const maxDelay = timerDelay(quietEndsFirst ? Math.max(maxLeftMs, quietDelay + 1) : maxLeftMs);
      seq += 1;
      // Under --inspect an actor, as a new group is, unless it is due now: a light record fires it at once,
      // for the bound that ended first (two timers due together could not tell which).
      const group =
        options.parent !== undefined && actorGroups.size < actorLimit && quietDelay > 0
          ? newActorGroup(
              options.parent,
              saved.id,
              groupOwner(latest.routeName, latest.profile),
              keyOfGroupId(saved.id),
              latest,
              quietMs,
              maxDelay,
              { merged, quietLeftMs: quietDelay },
            )
          : new LightGroup(
              latest,
              quietMs,
              maxDelay,
              clock,
              (output) => fired(saved.id, output),
              merged,
              quietDelay,
              quietDelay === 0 ? (quietEndsFirst ? "quiet_window" : "max_wait") : undefined,
            );
      groups.set(saved.id, group);
      // The group's record (written by the new event) now counts the saved events too.
      if (live !== undefined) options.observer?.updated(saved.id, latest, merged, saved.latest);
    },
    flushAll() {
      const pending = [...groups.values()];
      for (const group of pending) group.flush();
      return pending.length;
    },
    pendingCount: () => groups.size,
    pendingEvents: () =>
      [...groups.values()].map((group) => {
        const { latest, superseded } = peek(group);
        return withCoalesceNote(latest, superseded);
      }),
  };
}

/** The coalescer's place under the root system; `{type: "flush"}` flushes every group. */
export function coalescerActor(coalescer: Coalescer) {
  return fromCallback<{ type: "flush" }>(({ receive }) => {
    receive((event) => {
      if (event.type === "flush") coalescer.flushAll();
    });
  });
}
