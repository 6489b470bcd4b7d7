import {
  catchError,
  defaultIfEmpty,
  from,
  type MonoTypeOperatorFunction,
  map,
  mergeMap,
  type ObservableInput,
  of,
  take,
} from "rxjs";
import { type PipelineCtx, type Stage, withCtx } from "../context.js";
import { errorOutcome, isOutcome, type Outcome } from "../types.js";
import { onlyFor } from "./onlyFor.js";

/** Told about a stage that threw; the request is answered 500 and the stream goes on. */
export type StageFailure = (stage: string, err: unknown, ctx: PipelineCtx) => void;

export const INTERNAL_ERROR: Outcome = errorOutcome(500, "Internal error");

function settle(ctx: PipelineCtx, result: PipelineCtx | Outcome): PipelineCtx {
  if (result === ctx) return ctx;
  return isOutcome(result) ? withCtx(ctx, { outcome: result }) : result;
}

/** Runs one synchronous stage on a context that has no outcome yet; a throw becomes a 500. */
export function applyStage(
  name: string,
  stage: Stage,
  ctx: PipelineCtx,
  onFailure?: StageFailure,
): PipelineCtx {
  if (ctx.outcome !== undefined) return ctx;
  try {
    return settle(ctx, stage(ctx));
  } catch (err) {
    onFailure?.(name, err, ctx);
    return withCtx(ctx, { outcome: INTERNAL_ERROR });
  }
}

/** A synchronous stage as an operator: finished contexts pass through untouched. */
export function stageOperator(
  name: string,
  stage: Stage,
  onFailure?: StageFailure,
): MonoTypeOperatorFunction<PipelineCtx> {
  return map((ctx) => applyStage(name, stage, ctx, onFailure));
}

/** A named synchronous stage, for `stagesOperator`. */
export type NamedStage = readonly [name: string, stage: Stage];

/** Runs synchronous stages in order on one context until one of them ends the request. */
export function applyStages(
  stages: readonly NamedStage[],
  ctx: PipelineCtx,
  onFailure?: StageFailure,
): PipelineCtx {
  let current = ctx;
  for (let i = 0; i < stages.length && current.outcome === undefined; i++) {
    const [name, stage] = stages[i] as NamedStage;
    current = applyStage(name, stage, current, onFailure);
  }
  return current;
}

/**
 * Consecutive synchronous stages fused into one operator: the same as one `stageOperator` per stage
 * (each stage still lives in its own file), without an RxJS subscriber hop per stage per request.
 */
export function stagesOperator(
  stages: readonly NamedStage[],
  onFailure?: StageFailure,
): MonoTypeOperatorFunction<PipelineCtx> {
  return map((ctx) => applyStages(stages, ctx, onFailure));
}

/**
 * An asynchronous stage (script, direct delivery: a Promise, or any ObservableInput) with at most
 * `concurrency` runs in flight. Contexts it does not apply to (finished ones, or `applies` false) go
 * straight through and never wait for a slot: a 401 is not queued behind slow scripts.
 */
export function asyncStageOperator(
  name: string,
  stage: (ctx: PipelineCtx) => ObservableInput<PipelineCtx | Outcome>,
  concurrency: number,
  onFailure?: StageFailure,
  applies: (ctx: PipelineCtx) => boolean = () => true,
): MonoTypeOperatorFunction<PipelineCtx> {
  const open = (ctx: PipelineCtx) => ctx.outcome === undefined && applies(ctx);
  const run = (ctx: PipelineCtx) => {
    let pending: ObservableInput<PipelineCtx | Outcome>;
    try {
      pending = stage(ctx);
    } catch (err) {
      onFailure?.(name, err, ctx);
      return of(withCtx(ctx, { outcome: INTERNAL_ERROR }));
    }
    // Exactly one answer per request: the first value, or a 500 if the stage completes without one.
    return from(pending).pipe(
      take(1),
      map((result) => settle(ctx, result)),
      defaultIfEmpty(withCtx(ctx, { outcome: INTERNAL_ERROR })),
      catchError((err: unknown) => {
        onFailure?.(name, err, ctx);
        return of(withCtx(ctx, { outcome: INTERNAL_ERROR }));
      }),
    );
  };
  return onlyFor(open, mergeMap(run, concurrency));
}
