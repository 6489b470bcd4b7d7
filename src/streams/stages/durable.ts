import { type MonoTypeOperatorFunction, mergeMap } from "rxjs";
import { type PipelineCtx, withCtx } from "../context.js";
import { errorOutcome } from "../types.js";
import { seenKey } from "./idempotency.js";
import { onlyFor } from "./onlyFor.js";

export const STATE_UNAVAILABLE = errorOutcome(503, "Could not record the event, retry later");

export interface DurableDeps {
  /** Resolves once everything recorded so far is durable; undefined when it already is. */
  durable(): Promise<void> | undefined;
  /** Forgets a recorded delivery id (the sender's retry of a 503 must not be a duplicate). */
  forget(key: string): void;
}

/** Answers that promise something kept: 202 (accepted, coalesced) and 200 duplicate (of a kept event). */
const promisesKept = (ctx: PipelineCtx) =>
  ctx.outcome !== undefined && (ctx.outcome.status === 202 || ctx.outcome.body.status === "duplicate");

/**
 * After dispatch: an answer that promises the event is kept waits until the state store has made it
 * durable (one shared fdatasync per batch, see the journal's group commit). Other answers pass at once.
 * A failed write answers 503 instead of a 202 that would not be kept.
 */
export function durableOperator(deps: DurableDeps): MonoTypeOperatorFunction<PipelineCtx> {
  const wait = async (ctx: PipelineCtx): Promise<PipelineCtx> => {
    const pending = deps.durable();
    if (pending === undefined) return ctx;
    try {
      await pending;
      return ctx;
    } catch {
      if (ctx.accepted !== undefined) deps.forget(seenKey(ctx.accepted.routeName, ctx.accepted.deliveryId));
      return withCtx(ctx, { outcome: STATE_UNAVAILABLE });
    }
  };
  return onlyFor(
    promisesKept,
    mergeMap((ctx) => {
      // Nothing pending (the common case under light load): no Promise hop.
      return deps.durable() === undefined ? [ctx] : wait(ctx);
    }),
  );
}
