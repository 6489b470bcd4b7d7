import { type ActorRefFrom, fromCallback, setup } from "xstate";
import { LoggedError, RunFailedAtStop, RunKeptForRestart } from "../errors.js";
import type { Logger } from "../io/log.js";
import { ChurnSet } from "../streams/churnTables.js";
import type { AcceptedEvent } from "../streams/context.js";
import type { AgentReply } from "./agent/runner.js";

/**
 * What a waiting run keeps of its accepted event: everything but the parsed payload and the request
 * headers, which the run never reads (the prompt and `deliver_extra` are already rendered). A queued run
 * then costs about its prompt, so a burst can wait in memory without holding every payload.
 */
export type QueuedRun = Omit<AcceptedEvent, "payload" | "headers"> & FiredJob & RouteAsAccepted & MadeBefore;

/**
 * On a run a stop saved while its reply was being delivered (only there): that reply, and where its delivery
 * stood. The run delivers it from there (`RunSlot.madeReply`, `RunSlot.dueRetry`) without its agent.
 */
export interface MadeBefore {
  readonly reply?: KeptReply;
  readonly retry?: DueRetry;
}

/** A run's reply and where its delivery stands, as a stop saves them with the run (`MadeBefore`). */
export interface KeptDelivery {
  readonly reply: KeptReply;
  readonly retry?: DueRetry;
}

/**
 * On a shared run whose route this instance's config does not serve (only there): it runs with the route
 * as the accepting instance had it, so a `toolsets` name that is none of this instance's MCP servers was
 * one of that instance's, and narrows the run instead of being dropped as a misspelling.
 */
export interface RouteAsAccepted {
  readonly routeAsAccepted?: true;
}

/**
 * On the run of an event a `cron_job` route fired (only there): the job it fires, as the route named it
 * then. Saved and journaled with the run, so a restart runs it as a fire of that job, whatever the route
 * became meanwhile.
 */
export interface FiredJob {
  readonly cronJob?: string;
}

/**
 * What a run resolves with when nothing ran: a fired cron job paused, disabled or removed while the event
 * waited for its turn (the event is dropped and logged, as one dropped when it arrived): no run to time
 * or to record in the delivery history.
 */
export const NOT_RUN: unique symbol = Symbol("not run");

/**
 * The run slot a run holds, given to its executor: `release(run)` hands the slot back while the run goes on
 * (its delivery waits to retry), so the slot takes the next run. A no-op when the run no longer holds it,
 * or when the retrying deliveries are at their cap (the run then keeps its slot).
 */
export interface RunSlot {
  /**
   * Whether the run is outside its slot once this returns (handed back now or before; false: it keeps it);
   * a slot of the shared queue (`state.backend: redis`) first stores the run's reply with its job in Redis,
   * with `retry` when its delivery waits to retry (stored again at each retry's wait).
   */
  release(run: QueuedRun, retry?: DueRetry): boolean | Promise<boolean>;
  /**
   * A reply the run made before, kept with its job (`state.backend: redis`: an instance stopped or killed
   * while the run's delivery waited to retry): the run delivers it without running its agent again.
   */
  readonly madeReply?: KeptReply | undefined;
  /** The retry that delivery waited for then: delivered once it is due, its attempts counted on. */
  readonly dueRetry?: DueRetry | undefined;
  /**
   * When `dueRetry` is due on this instance's clock, when another instance's stop handed it on naming that
   * time on Redis's clock (one round trip to Redis): read once the delivery has taken its recipient's turn,
   * so a later delivery to the recipient taken meanwhile queues behind it. Absent: `dueRetry.dueAt`. Never
   * rejects.
   */
  dueHere?(): Promise<number>;
  /** Told the delivery's place as it joins its recipient's line (`SendOptions.inLine`). */
  inLine?(turn: number): void;
  /** Told the run's reply before it is delivered: a slot of the shared queue keeps it for `release`. */
  replied?(reply: KeptReply): void;
  /**
   * Stores where the delivery stands once a retry of it was stored (a split message's parts sent after that
   * retry went through), the slot neither handed back nor taken: an instance that takes the run over goes on
   * from there. The shared queue's slot has it; never rejects, and never holds the part back for long (a
   * Redis down, refusing or not answering: the part goes out unstored).
   */
  keepRetry?(retry: DueRetry, run?: QueuedRun): Promise<void>;
  /**
   * `keepRetry` costs nothing (a slot of this process keeps it in memory, for its stop to save): it is told
   * before each part of a split message after the first, also when no retry was stored.
   */
  readonly keepsEachPart?: true;
  /**
   * False: a stop that cuts the delivery short does not hand it on (`SendOptions.handsOn`), though the slot
   * has `keepRetry` (a slot of this process: an e-mail some recipients got ends its run at the stop).
   */
  readonly handsOn?: false;
}

/** What a run keeps of its agent's reply while its delivery waits to retry outside its slot. */
export interface KeptReply {
  readonly text: string;
  readonly record?: NonNullable<AgentReply["record"]>;
  /** Why the agent failed, when the reply is its failure notice: the run still fails once delivered. */
  readonly failed?: string;
  /**
   * The delivery id it was sent under, when the run makes its own (a cron job's fire): the instance that
   * delivers it later sends it under the same one, so a target de-duplicating by it posts it once.
   */
  readonly deliveryId?: string;
}

/** A delivery's retry as a run keeps it while the delivery waits for it. */
export interface DueRetry {
  /** When the retry is due (epoch ms, the gateway's wall clock). */
  readonly dueAt: number;
  /** The attempts made so far of the request it retries (the first and its retries before this one). */
  readonly attempts: number;
  /**
   * The parts of a split message delivered before the one it retries (its retries counted on are that
   * part's). Absent on a retry stored by a version that did not count them: the delivery goes on from the
   * first part.
   */
  readonly partsDelivered?: number;
  /**
   * The delivery target it retries (`telegram`): an instance whose route now delivers elsewhere (a reload,
   * instances on two configs during a rolling change) sends anew, from the first part, at once.
   */
  readonly target?: string;
  /**
   * The recipients it retries, when the platform took the message for the others (an e-mail's refused for
   * now at `RCPT TO`): the instance that goes on sends to them alone.
   */
  readonly recipients?: readonly string[];
}

/** `reply` as a run keeps it, with `failure` when the reply is the failure's notice. */
export function keptReply(reply: KeptReply, failure: unknown): KeptReply {
  return failure === undefined
    ? reply
    : { ...reply, failed: failure instanceof Error ? failure.message : String(failure) };
}

/**
 * Does one agent run for an accepted event: agent, then delivery. Rejects on failure; `NOT_RUN` when dropped.
 * `slot`: the run slot it holds, when a slot of this process runs it (not the Redis backend's workers).
 */
export type RunExecutor = (
  run: QueuedRun,
  signal: AbortSignal,
  slot?: RunSlot,
  // biome-ignore lint/suspicious/noConfusingVoidType: an executor that returns nothing (void) ran its run
) => Promise<void | typeof NOT_RUN>;

export interface RunsInput {
  readonly maxConcurrent: number;
  readonly execute: RunExecutor;
  readonly logger: Logger;
  /** The queue the slots pull from, when its owner made it (the gateway); else the machine makes one. */
  readonly queue?: RunQueue;
}

/**
 * `input` as the root keeps it (its copy of each child's input, for a restart): in JSON (`--inspect`), the
 * queue is not its counts, which the root publishes only when it changes itself (a spawn, a stop) and
 * would show long after they changed, but a pointer to the `runs` actor, which publishes them as they change.
 */
export function runsInput(input: RunsInput): RunsInput {
  // Not enumerable: the `runs` actor's context, a copy of its input's fields, keeps the queue itself.
  return Object.defineProperty({ ...input }, "toJSON", { value: runsInputJSON });
}

function runsInputJSON(this: RunsInput): object {
  return { ...this, queue: "see the runs actor" };
}

/** The timers the queue's drain bound waits on (the gateway's clock). */
export interface RunQueueTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(id: unknown): void;
}

const REAL_TIMERS: RunQueueTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (id) => clearTimeout(id as NodeJS.Timeout),
};

/** The timers and the never-set clock (`Clock.elapsed`) the stop's moment is measured on. */
export interface StopTimers extends RunQueueTimers {
  elapsed(): number;
}

const REAL_STOP_TIMERS: StopTimers = { ...REAL_TIMERS, elapsed: () => performance.now() };

/**
 * How near the gateway's stop an agent ended by a stop signal counts as ended by that stop: the signal
 * reaches the gateway and its agents at once (a systemd unit's cgroup), but either may act on it first.
 */
export const STOP_SIGNAL_WINDOW_MS = 1000;

/**
 * Waiting runs kept at most (default; `startGateway({ runQueueCap })`); past it new agent events are
 * answered 503 (retry later) instead of growing memory without bound under sustained overload. A burst
 * below the cap loses nothing: 100,000 waiting runs with 1 KB prompts hold ~100 MB.
 */
export const RUN_QUEUE_CAP = 100_000;

/**
 * Runs whose delivery waits to retry outside a run slot, at most (default; `startGateway({
 * retryingDeliveryCap })`). Past it a run whose delivery waits to retry keeps its slot, as each did before
 * they were handed back: a target that stays down cannot grow the set of waiting deliveries (each holding
 * its reply) without bound.
 */
export const RETRYING_DELIVERY_CAP = 1000;

export interface RunQueueOptions {
  /** Runs whose delivery may wait to retry outside a slot (default `RETRYING_DELIVERY_CAP`). */
  readonly retryingCap?: number;
  /** Told the first time a run keeps its slot because `retryingCap` deliveries already wait to retry. */
  readonly onRetryingCap?: (cap: number) => void;
  /** What the stop's moment is measured on (`STOP_SIGNAL_WINDOW_MS`). */
  readonly stopTimers?: StopTimers | undefined;
}

/** How far a `RunList`'s head may move before what is left is copied to the front (when it is at most as long). */
const RUN_LIST_COMPACT_AT = 1024;

/**
 * The waiting runs, first in first out, taken from the front in constant time at any length. An array's
 * `shift` copies its whole store once it holds more than ~16,000 elements (V8 moves a large object's start
 * only by copying it): 50–120 µs a run with 20,000–50,000 runs waiting (measured on Node 20), on the thread
 * that answers requests, while the cap is 100,000. Here the front moves along an index, and what is left is
 * copied to the start only when the taken part is at least as long (amortized constant, nothing allocated).
 */
export class RunList<T> implements Iterable<T> {
  private readonly items: (T | undefined)[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  shift(): T | undefined {
    const { items } = this;
    if (this.head === items.length) return undefined;
    const item = items[this.head];
    items[this.head] = undefined; // not kept alive by the list once taken
    this.head += 1;
    if (this.head >= RUN_LIST_COMPACT_AT && this.head * 2 >= items.length) {
      items.copyWithin(0, this.head);
      items.length -= this.head;
      this.head = 0;
    }
    return item;
  }

  /** The position of `item` from the front (its last occurrence), -1 when it is not in the list. */
  lastIndexOf(item: T): number {
    const at = this.items.lastIndexOf(item);
    return at < this.head ? -1 : at - this.head;
  }

  /** Removes the item at `at` (from the front). */
  removeAt(at: number): void {
    this.items.splice(this.head + at, 1);
  }

  /** Empties the list and returns what it held, first first. */
  takeAll(): T[] {
    const all = this.items.slice(this.head) as T[];
    this.items.length = 0;
    this.head = 0;
    return all;
  }

  *[Symbol.iterator](): Iterator<T> {
    for (let at = this.head; at < this.items.length; at++) yield this.items[at] as T;
  }
}

/** The shared FIFO the run slots pull from; plain data so the hot path never goes through a transition. */
export class RunQueue {
  readonly waiting = new RunList<QueuedRun>();
  /** Runs holding a slot: one added and one removed per run (see ChurnSet). */
  readonly active = new ChurnSet<QueuedRun>();
  /** Runs that handed their slot back while their delivery waits to retry (unfinished until it ends). */
  readonly retrying = new Set<QueuedRun>();
  private readonly retryingCap: number;
  private readonly onRetryingCap: ((cap: number) => void) | undefined;
  private capSaid = false;
  private readonly idleSlots: Array<() => void> = [];
  private readonly idleWaiters = new Set<() => void>();
  /** Aborted by `stopActive`: the runs under way are stopped and no slot takes another. */
  private readonly stopping = new AbortController();
  readonly stopSignal: AbortSignal = this.stopping.signal;

  /** When the gateway's stop began (`elapsed`), once it has. */
  private stopBegan: number | undefined;
  private readonly stopWaiters = new Set<() => void>();
  /** Runs whose agent the stop signal ended (`RunKeptForRestart`): unfinished, saved with the rest. */
  readonly kept: QueuedRun[] = [];
  /**
   * Runs that `stopActive` stopped and that ended all the same, with their reply or a failed run's notice
   * delivered (a mail some recipients got, its retry for the others cut short): finished, not to be saved.
   */
  private readonly endedAtStop = new Set<QueuedRun>();
  /**
   * The replies of runs whose delivery went past its first part, waited to retry or was stopped, with where
   * it stood (kept by the slots: `keepDelivery`), until the run ends: a stop saves a run with its own.
   */
  private readonly delivering = new Map<QueuedRun, KeptDelivery>();
  private readonly stopTimers: StopTimers;

  constructor(
    private readonly timers: RunQueueTimers = REAL_TIMERS,
    options: RunQueueOptions = {},
  ) {
    this.retryingCap = options.retryingCap ?? RETRYING_DELIVERY_CAP;
    this.onRetryingCap = options.onRetryingCap;
    this.stopTimers = options.stopTimers ?? REAL_STOP_TIMERS;
  }

  /** The gateway's stop begins (its first step). */
  beginStop(): void {
    if (this.stopBegan !== undefined) return;
    this.stopBegan = this.stopTimers.elapsed();
    for (const notify of this.stopWaiters) notify();
    this.stopWaiters.clear();
  }

  /** Whether the stop began at most `windowMs` ago, or begins within `windowMs` (waited for). */
  stopNear(windowMs: number = STOP_SIGNAL_WINDOW_MS): Promise<boolean> {
    if (this.stopBegan !== undefined)
      return Promise.resolve(this.stopTimers.elapsed() - this.stopBegan <= windowMs);
    return new Promise((resolve) => {
      const onStop = () => {
        this.stopTimers.clearTimeout(timer);
        resolve(true);
      };
      const timer = this.stopTimers.setTimeout(() => {
        this.stopWaiters.delete(onStop);
        resolve(false);
      }, windowMs);
      this.stopWaiters.add(onStop);
    });
  }

  /**
   * Told when the counts `toJSON` gives change (`--inspect`: the `runs` actor then publishes a snapshot);
   * unset otherwise, so the hot path pays one check.
   */
  onChange: (() => void) | undefined;

  push(event: QueuedRun): void {
    this.waiting.push(event);
    this.onChange?.();
    const wake = this.idleSlots.pop();
    // After the current turn: the request that queued the run is answered (202) before its agent starts.
    if (wake !== undefined) setImmediate(wake);
  }
  /** A slot asks for work; `wake` is called once when work arrives while it waits. */
  take(wake: () => void): QueuedRun | undefined {
    const event = this.waiting.shift();
    if (event === undefined) this.idleSlots.push(wake);
    else {
      this.active.add(event);
      this.onChange?.();
    }
    return event;
  }
  /** Takes `run` out of the waiting list (its event was answered 503 after all); false when it is not waiting. */
  withdraw(run: QueuedRun): boolean {
    const at = this.waiting.lastIndexOf(run);
    if (at < 0) return false;
    this.waiting.removeAt(at);
    this.onChange?.();
    if (this.isIdle()) for (const notify of this.idleWaiters) notify();
    return true;
  }
  /** Empties the waiting list (shutdown: what no slot has started stays unstarted) and returns it. */
  takeWaiting(): QueuedRun[] {
    return this.waiting.takeAll();
  }
  /**
   * Stops the runs under way, those whose delivery waits to retry outside a slot included (shutdown, past
   * the drain timeout: their agents are stopped and their replies not delivered, as they run again at the
   * next start) and returns them; no slot takes a run after it.
   */
  stopActive(): QueuedRun[] {
    const active = [...this.active, ...this.retrying];
    this.stopping.abort();
    return active;
  }
  /** `runs` (what `stopActive` returned) but those that ended all the same since. */
  stillUnfinished(runs: readonly QueuedRun[]): QueuedRun[] {
    return runs.filter((run) => !this.endedAtStop.has(run));
  }
  /**
   * Keeps `run`'s reply (`reply`, or the one kept before or that it was saved with) and where its delivery
   * stands (`retry`, when given; else the one kept before), until the run ends.
   */
  keepDelivery(run: QueuedRun, reply: KeptReply | undefined, retry?: DueRetry): void {
    const before = this.delivering.get(run);
    const made = reply ?? before?.reply ?? run.reply;
    if (made === undefined) return;
    const due = retry ?? before?.retry ?? run.retry;
    this.delivering.set(run, due === undefined ? { reply: made } : { reply: made, retry: due });
  }
  /** The reply `run` made and where its delivery stands, as a stop saves them (undefined: none made yet). */
  keptDelivery(run: QueuedRun): KeptDelivery | undefined {
    const kept = this.delivering.get(run);
    if (kept !== undefined) return kept;
    if (run.reply === undefined) return undefined;
    return run.retry === undefined ? { reply: run.reply } : { reply: run.reply, retry: run.retry };
  }
  /** Whether `run` goes on outside its slot (its delivery waits to retry, or waits behind one that does). */
  isOutside(run: QueuedRun): boolean {
    return this.retrying.has(run);
  }
  /**
   * Moves a run from its slot to the retrying deliveries (its slot then takes the next run); false when
   * it holds no slot, or when `retryingCap` runs already wait to retry (said once): it keeps its slot.
   */
  release(run: QueuedRun): boolean {
    if (!this.active.has(run)) return false;
    if (this.retrying.size >= this.retryingCap) {
      if (!this.capSaid) {
        this.capSaid = true;
        this.onRetryingCap?.(this.retryingCap);
      }
      return false;
    }
    this.active.delete(run);
    this.retrying.add(run);
    this.onChange?.();
    return true;
  }
  /** `ended`: false for a run the stop cut short (or kept for the next start), which is saved to run again. */
  finish(event: QueuedRun, ended = true): void {
    if (!this.active.delete(event)) this.retrying.delete(event);
    if (ended && this.delivering.size > 0) this.delivering.delete(event);
    if (ended && this.stopping.signal.aborted) this.endedAtStop.add(event);
    this.onChange?.();
    if (this.isIdle()) for (const notify of this.idleWaiters) notify();
  }
  isIdle(): boolean {
    return this.active.size === 0 && this.waiting.length === 0 && this.retrying.size === 0;
  }
  /**
   * The queue as the inspector (`--inspect`) shows it in the `runs` actor's context: how many runs wait,
   * how many run in a slot, and how many wait outside one for their delivery's retry. Its fields as they
   * are showed every waiting run's prompt, the runs under way (a Set) as `{}` whatever ran, and the
   * slots' internals.
   */
  toJSON(): { waiting: number; active: number; retrying: number } {
    return (
      this.countsShown?.() ?? {
        waiting: this.waiting.length,
        active: this.active.size,
        retrying: this.retrying.size,
      }
    );
  }
  /**
   * Where the counts `toJSON` gives come from when the runs do not go through this queue (`state.backend:
   * redis`, under `--inspect`: the shared queue's, as last read); unset, this queue's own.
   */
  countsShown: (() => { waiting: number; active: number; retrying: number }) | undefined;
  whenIdle(timeoutMs: number): Promise<boolean> {
    if (this.isIdle()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (idle: boolean) => {
        this.timers.clearTimeout(timer);
        this.idleWaiters.delete(onIdle);
        resolve(idle);
      };
      const onIdle = () => done(true);
      const timer = this.timers.setTimeout(() => done(false), timeoutMs);
      this.idleWaiters.add(onIdle);
    });
  }
}

interface SlotInput {
  readonly queue: RunQueue;
  readonly execute: RunExecutor;
  readonly logger: Logger;
}

/**
 * How many runs a slot takes back to back before it lets the event loop read and answer requests. A run
 * that never waits for I/O (the echo agent delivering to the log) finishes in microtasks, so without a
 * pause a backlog (runs resumed at start, a flush of many coalescing groups) was worked off in one turn
 * of the event loop: 50,000 runs held every answer, /health included, for 2.4 s. Counted, not timed,
 * so the order of runs does not depend on the machine's speed.
 */
export const RUNS_PER_TURN = 64;

/** Runs given one signal before the slot makes a new one (the entries it collects are bounded by it). */
export const RUNS_PER_SIGNAL = 256;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * One run slot: takes runs from the queue one at a time; a failing run is logged and the slot goes on. A run
 * whose delivery waits to retry may hand the slot back (`RunSlot.release`): the slot then takes the next
 * run while that one goes on outside it, its end still logged and counted off the queue.
 */
const runSlot = fromCallback<{ type: "wake" }, SlotInput>(({ input, receive }) => {
  const { queue, execute, logger } = input;
  const abort = new AbortController();
  // The slot's own stop (the actor's) or the queue's (a stop past the drain timeout) ends its run.
  const signal = AbortSignal.any([abort.signal, queue.stopSignal]);
  // The runs get a signal of the slot's own, aborted with it, replaced every RUNS_PER_SIGNAL runs: the
  // signals a run composes from the one it is given (AbortSignal.any) leave an entry in it that Node 20
  // never drops while it lives (scopedSignal in clock.ts), so given the slot's (or the queue's stop signal)
  // they piled up for the life of the gateway; a replaced one goes with its entries once its runs are over.
  // Not one per run: an AbortController costs a run that never waits (echo) ~2 µs and its collection.
  let runSignal = new AbortController();
  let served = 0;
  /** The signals of runs that handed the slot back and go on (a stop aborts them too), by runs on each. */
  const released = new Map<AbortController, number>();
  signal.addEventListener(
    "abort",
    () => {
      runSignal.abort(signal.reason);
      for (const controller of released.keys()) controller.abort(signal.reason);
    },
    { once: true },
  );
  let busy = false;
  /** The run the slot holds; undefined between runs and once it was handed back. */
  let current: QueuedRun | undefined;
  /** Bumped when a run hands the slot back: the pump awaiting that run ends with it, a new one goes on. */
  let pumps = 0;
  /** The reply of the run the slot holds, once made (`replied`): kept with the run once its delivery goes on. */
  let made: KeptReply | undefined;
  const slot: RunSlot = {
    keepsEachPart: true,
    handsOn: false,
    replied(reply) {
      made = reply;
    },
    release(run, retry) {
      queue.keepDelivery(run, current === run ? made : undefined, retry);
      if (current !== run) return queue.isOutside(run);
      if (!queue.release(run)) return false;
      current = undefined;
      released.set(runSignal, (released.get(runSignal) ?? 0) + 1);
      pumps += 1;
      busy = false;
      // After the current turn, as a pushed run's wake: the released run's retry wait is under way first.
      setImmediate(wake);
      return true;
    },
    keepRetry(retry, run) {
      if (run !== undefined) queue.keepDelivery(run, current === run ? made : undefined, retry);
      return Promise.resolve();
    },
  };
  const pump = async () => {
    if (busy) return;
    busy = true;
    const pumpId = pumps;
    let inTurn = 0;
    try {
      while (!signal.aborted) {
        if (inTurn >= RUNS_PER_TURN) {
          inTurn = 0;
          await nextTurn();
          continue;
        }
        inTurn += 1;
        const event = queue.take(wake);
        if (event === undefined) break;
        if (served === RUNS_PER_SIGNAL) {
          runSignal = new AbortController();
          served = 0;
        }
        served += 1;
        const controller = runSignal;
        current = event;
        made = undefined;
        /** False for a run the stop cut short or kept: it is saved and runs again. */
        let ended = true;
        try {
          // Saved by a stop with the reply it was delivering: it goes on with that reply, where it stood.
          await execute(
            event,
            controller.signal,
            event.reply === undefined ? slot : { ...slot, madeReply: event.reply, dueRetry: event.retry },
          );
        } catch (err) {
          // Its failure's notice went out as the stop came: the run ended, failed, as without the stop.
          const failedAtStop = err instanceof RunFailedAtStop;
          const failure = failedAtStop ? err.cause : err;
          // A run a stop ended did not fail: it is saved and runs again (the stop's line counts them).
          if (err instanceof RunKeptForRestart) {
            ended = false;
            queue.kept.push(event);
            logger.info(
              { route: event.routeName, delivery_id: event.deliveryId },
              `[webhook] ${event.routeName}: the agent command was ended by the gateway's stop signal — the run is kept and runs again at the next start`,
            );
          } else if (signal.aborted && !failedAtStop) {
            ended = false;
            // Stopped as its reply went out: saved with it, so the next start does not run its agent again.
            if (current === event && made !== undefined) queue.keepDelivery(event, made);
          } else if (!(failure instanceof LoggedError))
            logger.error(
              {
                route: event.routeName,
                delivery_id: event.deliveryId,
                err: failure instanceof Error ? failure.message : String(failure),
              },
              `[webhook] ${event.routeName}: agent run failed`,
            );
        } finally {
          queue.finish(event, ended);
        }
        if (pumpId !== pumps) {
          // The run handed the slot back and has now ended: the slot's pump went on without this one.
          const left = (released.get(controller) ?? 1) - 1;
          if (left === 0) released.delete(controller);
          else released.set(controller, left);
          return;
        }
        current = undefined;
      }
    } finally {
      if (pumpId === pumps) busy = false;
    }
  };
  const wake = () => void pump();
  receive(wake);
  wake();
  return () => abort.abort();
});

/**
 * The bounded run queue (`agent.max_concurrent_runs`): one child actor per run slot under the root
 * system, each running one agent run at a time from a shared FIFO. Slots are long-lived on purpose:
 * spawning an XState child per run cost ~70 µs and kept ~320 bytes per spawned actor alive (measured
 * with xstate 5.33, see bench/README.md), which a gateway that runs for months cannot afford.
 */
export const runsMachine = setup({
  types: {
    context: {} as RunsInput & { readonly queue: RunQueue },
    events: {} as { type: "enqueue"; event: QueuedRun } | { type: "changed" },
    input: {} as RunsInput,
  },
  actors: { slot: runSlot },
}).createMachine({
  id: "runs",
  context: ({ input, spawn }) => {
    const queue = input.queue ?? new RunQueue();
    for (let i = 0; i < input.maxConcurrent; i++) {
      spawn("slot", {
        id: `run-slot-${i + 1}`,
        input: { queue, execute: input.execute, logger: input.logger },
      });
    }
    return { ...input, queue };
  },
  on: {
    enqueue: { actions: ({ context, event }) => context.queue.push(event.event) },
    // The queue's counts changed (`--inspect` only): processing the event publishes a snapshot with them.
    changed: {},
  },
});

export type RunsRef = ActorRefFrom<typeof runsMachine>;

/** The keys of the accept stage's events (`acceptEvent`), in their order. */
const ACCEPTED_KEYS = [
  "routeName",
  "route",
  "profile",
  "event",
  "deliveryId",
  "madeId",
  "payload",
  "headers",
  "prompt",
  "extra",
  "unfilled",
  "receivedAt",
  "receivedTick",
];

/** Whether `event` has exactly the keys, in the order, the accept stage gives every request's event. */
function acceptStageShape(event: AcceptedEvent): boolean {
  let i = 0;
  for (const key in event) if (key !== ACCEPTED_KEYS[i++]) return false;
  return i === ACCEPTED_KEYS.length;
}

/**
 * The part of an accepted event a run needs (see `QueuedRun`): every key but the payload and headers.
 * A request's event (the accept stage's shape) is copied key by key: the object rest's generic copy
 * took ~0.5 µs of every accepted request, the copy ~0.1 with the check. Any other is copied by the rest.
 */
export function queuedRun(event: AcceptedEvent): QueuedRun {
  if (acceptStageShape(event))
    return {
      routeName: event.routeName,
      route: event.route,
      profile: event.profile,
      event: event.event,
      deliveryId: event.deliveryId,
      madeId: event.madeId,
      prompt: event.prompt,
      extra: event.extra,
      unfilled: event.unfilled,
      receivedAt: event.receivedAt,
      receivedTick: event.receivedTick,
    };
  const { payload: _payload, headers: _headers, ...run } = event;
  return run;
}

/** Enqueues unless the waiting list is at its cap; false means the event was not taken. */
export function enqueueRun(ref: RunsRef, event: AcceptedEvent, cap = RUN_QUEUE_CAP): boolean {
  const { queue } = ref.getSnapshot().context;
  if (queue.waiting.length >= cap) return false;
  queue.push(queuedRun(event));
  return true;
}

/** Queues runs accepted before a restart (no cap: they were answered 202 long ago). */
export function resumeRuns(ref: RunsRef, queued: readonly QueuedRun[]): void {
  const { queue } = ref.getSnapshot().context;
  for (const run of queued) queue.push(run);
}

/** Stops starting waiting runs and hands them back (shutdown after the drain timeout). */
export function takeWaitingRuns(ref: RunsRef): QueuedRun[] {
  return ref.getSnapshot().context.queue.takeWaiting();
}

/** Runs a slot has started and not finished (those whose delivery waits to retry outside a slot too). */
export function activeRuns(ref: RunsRef): QueuedRun[] {
  const { queue } = ref.getSnapshot().context;
  return [...queue.active, ...queue.retrying];
}

/** Waits until no run is waiting or running; resolves false when `timeoutMs` passes first. */
export function drainRuns(ref: RunsRef, timeoutMs: number): Promise<boolean> {
  return ref.getSnapshot().context.queue.whenIdle(timeoutMs);
}

/** Events not yet finished (running, waiting to retry their delivery, then waiting), for the shutdown log. */
export function unfinishedRuns(ref: RunsRef): QueuedRun[] {
  const { queue } = ref.getSnapshot().context;
  return [...queue.active, ...queue.retrying, ...queue.kept, ...queue.waiting];
}
