import { isPromise, type MaybePromise } from "../stateUnavailable.js";
import { errorOutcome, type Outcome } from "../types.js";
import type { MaybeAsyncStage } from "./maybeAsync.js";

export const RATE_LIMITED = errorOutcome(429, "Rate limit exceeded");

export interface RateLimitDeps {
  /** Synchronous in memory; a Promise when the windows are shared (Redis). */
  tryAcquire(routeName: string): MaybePromise<boolean>;
  /** Milliseconds until the route's window reopens, sent as `Retry-After` (whole seconds, at least 1). */
  msUntilReset?(routeName: string): number;
}

function rateLimited(ms: number | undefined): Outcome {
  if (ms === undefined) return RATE_LIMITED;
  return { ...RATE_LIMITED, headers: { "Retry-After": String(Math.max(1, Math.ceil(ms / 1000))) } };
}

/** Step 3 of spec 4.2: a fixed window per route name (not global). */
export function rateLimitStage(deps: RateLimitDeps): MaybeAsyncStage {
  return (ctx) => {
    const route = ctx.inbound.routeName;
    const allowed = deps.tryAcquire(route);
    if (isPromise(allowed)) return allowed.then((ok) => (ok ? ctx : rateLimited(deps.msUntilReset?.(route))));
    return allowed ? ctx : rateLimited(deps.msUntilReset?.(route));
  };
}
