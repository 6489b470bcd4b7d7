import { type MonoTypeOperatorFunction, catchError, from, map, mergeMap, of } from "rxjs";
import type { AsyncStage, PipelineCtx, Stage } from "../context.js";
import { type Outcome, errorOutcome, isOutcome } from "../types.js";

/** Told about a stage that threw; the request is answered 500 and the stream goes on. */
export type StageFailure = (stage: string, err: unknown, ctx: PipelineCtx) => void;

export const INTERNAL_ERROR: Outcome = errorOutcome(500, "Internal error");

function settle(ctx: PipelineCtx, result: PipelineCtx | Outcome): PipelineCtx {
  return isOutcome(result) ? { ...ctx, outcome: result } : result;
}

/** Runs one synchronous stage on a context that has no outcome yet; a throw becomes a 500. */
export function applyStage(name: string, stage: Stage, ctx: PipelineCtx, onFailure?: StageFailure): PipelineCtx {
  if (ctx.outcome !== undefined) return ctx;
  try {
    return settle(ctx, stage(ctx));
  } catch (err) {
    onFailure?.(name, err, ctx);
    return { ...ctx, outcome: INTERNAL_ERROR };
  }
}

/** A synchronous stage as an operator: finished contexts pass through untouched. */
export function stageOperator(name: string, stage: Stage, onFailure?: StageFailure): MonoTypeOperatorFunction<PipelineCtx> {
  return map((ctx) => applyStage(name, stage, ctx, onFailure));
}

/** An asynchronous stage (script, dispatch) with at most `concurrency` contexts in flight. */
export function asyncStageOperator(
  name: string,
  stage: AsyncStage,
  concurrency: number,
  onFailure?: StageFailure,
): MonoTypeOperatorFunction<PipelineCtx> {
  return mergeMap((ctx) => {
    if (ctx.outcome !== undefined) return of(ctx);
    let pending: Promise<PipelineCtx | Outcome>;
    try {
      pending = stage(ctx);
    } catch (err) {
      onFailure?.(name, err, ctx);
      return of({ ...ctx, outcome: INTERNAL_ERROR });
    }
    return from(pending).pipe(
      map((result) => settle(ctx, result)),
      catchError((err: unknown) => {
        onFailure?.(name, err, ctx);
        return of({ ...ctx, outcome: INTERNAL_ERROR });
      }),
    );
  }, concurrency);
}
