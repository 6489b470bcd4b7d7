import type { Stage } from "../context.js";
import { isPromise, type MaybePromise } from "../stateUnavailable.js";
import { errorOutcome, type Outcome } from "../types.js";
import type { MaybeAsyncStage } from "./maybeAsync.js";

export const RATE_LIMITED = errorOutcome(429, "Rate limit exceeded");

export interface RateLimitDeps {
  /** True when the route's quota for the current window is spent; counts nothing. */
  isSpent(routeName: string): boolean;
  /** Spends one request of the route's quota; false when none is left. Synchronous in memory; a Promise when the windows are shared (Redis). */
  tryAcquire(routeName: string): MaybePromise<boolean>;
  /** Milliseconds until the route's window reopens, sent as `Retry-After` (whole seconds, at least 1). */
  msUntilReset?(routeName: string): number;
}

function rateLimited(ms: number | undefined): Outcome {
  if (ms === undefined) return RATE_LIMITED;
  return { ...RATE_LIMITED, headers: { "Retry-After": String(Math.max(1, Math.ceil(ms / 1000))) } };
}

/**
 * Step 3 of the processing order (docs/webhook.md), a fixed window per route name (not global), split in
 * two around authentication: this gate answers 429 before any signature work once the route's quota is
 * spent, and `rateSpendStage` (right after auth) is what spends it. Requests that fail authentication
 * therefore never spend the quota, so a flood of unsigned requests cannot lock the real sender out.
 */
export function rateLimitStage(deps: RateLimitDeps): Stage {
  return (ctx) =>
    deps.isSpent(ctx.inbound.routeName) ? rateLimited(deps.msUntilReset?.(ctx.inbound.routeName)) : ctx;
}

/** Spends one unit of the route's quota for an authenticated request (duplicates and ignored events too). */
export function rateSpendStage(deps: RateLimitDeps): MaybeAsyncStage {
  return (ctx) => {
    const route = ctx.inbound.routeName;
    const allowed = deps.tryAcquire(route);
    if (isPromise(allowed)) return allowed.then((ok) => (ok ? ctx : rateLimited(deps.msUntilReset?.(route))));
    return allowed ? ctx : rateLimited(deps.msUntilReset?.(route));
  };
}
