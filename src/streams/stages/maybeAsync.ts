import { type MonoTypeOperatorFunction, Observable } from "rxjs";
import { type PipelineCtx, withCtx } from "../context.js";
import { RecordPendingError, recordPendingOutcome } from "../recordPending.js";
import {
  isPromise,
  type MaybePromise,
  STATE_UNAVAILABLE,
  StateUnavailableError,
} from "../stateUnavailable.js";
import { isOutcome, type Outcome } from "../types.js";
import { INTERNAL_ERROR, type StageFailure } from "./operator.js";

/**
 * A stage that answers synchronously with the in-memory state and with a Promise when the state is
 * shared (Redis): the rate limit, idempotency and dispatch stages.
 */
export type MaybeAsyncStage = (ctx: PipelineCtx) => MaybePromise<PipelineCtx | Outcome>;
export type NamedMaybeAsyncStage = readonly [name: string, stage: MaybeAsyncStage];

function settle(ctx: PipelineCtx, result: PipelineCtx | Outcome): PipelineCtx {
  if (result === ctx) return ctx;
  return isOutcome(result) ? withCtx(ctx, { outcome: result }) : result;
}

/** Shared state unreachable → 503 with Retry-After; anything else is a stage failure → 500. */
function failed(name: string, err: unknown, ctx: PipelineCtx, onFailure?: StageFailure): PipelineCtx {
  if (err instanceof RecordPendingError) return withCtx(ctx, { outcome: recordPendingOutcome(err) });
  if (err instanceof StateUnavailableError) return withCtx(ctx, { outcome: STATE_UNAVAILABLE });
  onFailure?.(name, err, ctx);
  return withCtx(ctx, { outcome: INTERNAL_ERROR });
}

/**
 * Runs the stages in order until one ends the request, synchronously as long as every stage answers
 * synchronously; from the first stage that returns a Promise on, the rest run after it resolves.
 */
export function applyMaybeAsyncStages(
  stages: readonly NamedMaybeAsyncStage[],
  ctx: PipelineCtx,
  onFailure?: StageFailure,
  from = 0,
): MaybePromise<PipelineCtx> {
  let current = ctx;
  for (let i = from; i < stages.length && current.outcome === undefined; i++) {
    const [name, stage] = stages[i] as NamedMaybeAsyncStage;
    let result: MaybePromise<PipelineCtx | Outcome>;
    try {
      result = stage(current);
    } catch (err) {
      return failed(name, err, current, onFailure);
    }
    if (isPromise(result)) {
      const before = current;
      return result.then(
        (value) => applyMaybeAsyncStages(stages, settle(before, value), onFailure, i + 1),
        (err: unknown) => failed(name, err, before, onFailure),
      );
    }
    current = settle(current, result);
  }
  return current;
}

/**
 * Like `stagesOperator`, for stages that may answer with a Promise: a context whose stages all answered
 * synchronously is emitted at once (no extra tick); the stream completes once every pending one is out.
 */
export function maybeAsyncStagesOperator(
  stages: readonly NamedMaybeAsyncStage[],
  onFailure?: StageFailure,
): MonoTypeOperatorFunction<PipelineCtx> {
  return (source) =>
    new Observable<PipelineCtx>((subscriber) => {
      let pending = 0;
      let sourceDone = false;
      const subscription = source.subscribe({
        next(ctx) {
          const result = applyMaybeAsyncStages(stages, ctx, onFailure);
          if (!isPromise(result)) {
            subscriber.next(result);
            return;
          }
          pending += 1;
          void result.then((done) => {
            pending -= 1;
            subscriber.next(done);
            if (sourceDone && pending === 0) subscriber.complete();
          });
        },
        error: (err: unknown) => subscriber.error(err),
        complete() {
          sourceDone = true;
          if (pending === 0) subscriber.complete();
        },
      });
      return () => subscription.unsubscribe();
    });
}
