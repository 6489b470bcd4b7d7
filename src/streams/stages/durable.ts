import { type MonoTypeOperatorFunction, Observable } from "rxjs";
import { type AcceptedEvent, type PipelineCtx, renderedOnly, withCtx } from "../context.js";
import { unavailableOutcome } from "../types.js";
import { seenKey } from "./idempotency.js";
import { onlyFor } from "./onlyFor.js";

/** The journal could not be written (disk full): temporary, so it says when to come back. */
export const STATE_UNAVAILABLE = unavailableOutcome("Could not record the event, retry later");

export interface DurableDeps {
  /** Resolves once everything recorded so far is durable; undefined when it already is. */
  durable(): Promise<void> | undefined;
  /** Forgets a recorded delivery id (the sender's retry of a 503 must not be a duplicate). */
  forget(key: string): void;
  /**
   * An event the dispatch stage answered 202 is answered 503 here instead: a coalescing group that took it no
   * longer counts it (a group left with none answered 202 owes no run), and a key that remembered its run
   * (a retired event run at once, whose run is withdrawn) forgets it (`Coalescer.withdraw`).
   */
  withdrawn?(event: AcceptedEvent): void;
  /**
   * An event answered 202 whose record is durable: a key that remembered its run (a retired event run at
   * once) no longer keeps what a withdrawal would give back (`Coalescer.kept`).
   */
  kept?(event: AcceptedEvent): void;
  /**
   * After the contexts one sync released have gone on (their answers written): what was left for the end of
   * the turn about them (the delivery history's lines) is written now, before anything else the turn does.
   */
  answered?(): void;
}

/** Answers that promise something kept: 202 (accepted, coalesced) and 200 duplicate (of a kept event). */
export const promisesKept = (ctx: PipelineCtx) =>
  ctx.outcome !== undefined && (ctx.outcome.status === 202 || ctx.outcome.body.status === "duplicate");

/**
 * What a context keeps while its answer waits for the sync: all but the parsed payload, which nothing after
 * this stage reads (the prompt and extras are rendered, the history keeps the body's bytes). A real
 * sender's body parses to tens of KB of objects; held across the wait, they outlived young-generation
 * collections under load and were promoted to the old generation, whose collections then ran back to back
 * (bench/README.md). An event a coalescing group took stays the same object: the group finds it by it
 * should the write fail, and holds it until it fires anyway.
 */
function heldWhileDurable(ctx: PipelineCtx): PipelineCtx {
  const accepted = ctx.accepted;
  if (accepted === undefined || ctx.outcome?.body.status === "coalesced")
    return ctx.payload === undefined ? ctx : withCtx(ctx, { payload: undefined });
  return withCtx(ctx, { payload: undefined, accepted: renderedOnly(accepted) });
}

/** The contexts waiting for one durable() promise, in the order they came. */
interface Waiting {
  readonly promise: Promise<void>;
  readonly ctxs: PipelineCtx[];
}

/**
 * After dispatch: an answer that promises the event is kept waits until the state store has made it
 * durable (one shared fdatasync per batch, see the journal's group commit). Other answers pass at once.
 * A failed write answers 503 instead of a 202 that would not be kept. The contexts given the same promise
 * (one journal batch) go on together when it settles, in the order they came, with one `then` for them
 * all: no Promise, inner Observable and subscriber per request, as a `mergeMap` per context had.
 */
export function durableOperator(deps: DurableDeps): MonoTypeOperatorFunction<PipelineCtx> {
  const failed = (ctx: PipelineCtx): PipelineCtx => {
    if (ctx.accepted !== undefined) {
      deps.forget(seenKey(ctx.accepted.routeName, ctx.accepted.deliveryId));
      if (ctx.outcome?.status === 202) deps.withdrawn?.(ctx.accepted);
    }
    return withCtx(ctx, { outcome: STATE_UNAVAILABLE });
  };
  const kept = deps.kept;
  const passed = (ctx: PipelineCtx): PipelineCtx => {
    if (kept !== undefined && ctx.accepted !== undefined && ctx.outcome?.status === 202) kept(ctx.accepted);
    return ctx;
  };
  const waitForDurable: MonoTypeOperatorFunction<PipelineCtx> = (source) =>
    new Observable<PipelineCtx>((subscriber) => {
      let latest: Waiting | undefined;
      let unsettled = 0;
      let ended = false;
      const release = (waiting: Waiting, ok: boolean) => {
        unsettled -= 1;
        if (latest === waiting) latest = undefined;
        try {
          for (const ctx of waiting.ctxs) subscriber.next(ok ? passed(ctx) : failed(ctx));
        } catch (err) {
          subscriber.error(err);
          return;
        }
        deps.answered?.();
        if (ended && unsettled === 0) subscriber.complete();
      };
      const input = source.subscribe({
        next(ctx) {
          const promise = deps.durable();
          // Nothing pending (the common case under light load): no Promise hop.
          if (promise === undefined) return subscriber.next(passed(ctx));
          if (latest === undefined || latest.promise !== promise) {
            const waiting: Waiting = { promise, ctxs: [] };
            latest = waiting;
            unsettled += 1;
            promise.then(
              () => release(waiting, true),
              () => release(waiting, false),
            );
          }
          latest.ctxs.push(heldWhileDurable(ctx));
        },
        error: (err: unknown) => subscriber.error(err),
        complete() {
          ended = true;
          if (unsettled === 0) subscriber.complete();
        },
      });
      return () => input.unsubscribe();
    });
  return onlyFor(promisesKept, waitForDurable);
}
