import { isPromise, type MaybePromise } from "../stateUnavailable.js";
import { errorOutcome, type Outcome } from "../types.js";
import type { MaybeAsyncStage } from "./maybeAsync.js";

export const RATE_LIMITED = errorOutcome(429, "Rate limit exceeded");

export interface RateLimitDeps {
  /** True while the route's quota for the current window is known to be spent; counts nothing. */
  isSpent(routeName: string): boolean;
  /** Spends one request of the route's quota; false when none is left. Synchronous in memory; a Promise when the windows are shared (Redis). */
  tryAcquire(routeName: string): MaybePromise<boolean>;
  /** Milliseconds until the route's window reopens, sent as `Retry-After` (whole seconds, at least 1). */
  msUntilReset?(routeName: string): number;
}

/** The 429, with `Retry-After` when the time until the window reopens is known. */
export function rateLimited(ms: number | undefined): Outcome {
  if (ms === undefined) return RATE_LIMITED;
  return { ...RATE_LIMITED, headers: { "Retry-After": String(Math.max(1, Math.ceil(ms / 1000))) } };
}

/**
 * Step 3 of the processing order (docs/webhook.md): a fixed window per route name (not global), before
 * authentication, so every request that reaches it spends the route's quota, signed or not. A route known
 * to be spent is answered without asking the limiter again (with Redis: no round trip).
 */
export function rateLimitStage(deps: RateLimitDeps): MaybeAsyncStage {
  return (ctx) => {
    const route = ctx.inbound.routeName;
    if (deps.isSpent(route)) return rateLimited(deps.msUntilReset?.(route));
    const allowed = deps.tryAcquire(route);
    if (isPromise(allowed)) return allowed.then((ok) => (ok ? ctx : rateLimited(deps.msUntilReset?.(route))));
    return allowed ? ctx : rateLimited(deps.msUntilReset?.(route));
  };
}
