import type { Stage } from "../context.js";
import { errorOutcome, type Outcome } from "../types.js";

export const RATE_LIMITED = errorOutcome(429, "Rate limit exceeded");

export interface RateLimitDeps {
  tryAcquire(routeName: string): boolean;
  /** Milliseconds until the route's window reopens, sent as `Retry-After` (whole seconds, at least 1). */
  msUntilReset?(routeName: string): number;
}

function rateLimited(ms: number | undefined): Outcome {
  if (ms === undefined) return RATE_LIMITED;
  return { ...RATE_LIMITED, headers: { "Retry-After": String(Math.max(1, Math.ceil(ms / 1000))) } };
}

/** Step 3 of the processing order (docs/webhook.md): a fixed window per route name (not global). */
export function rateLimitStage(deps: RateLimitDeps): Stage {
  return (ctx) =>
    deps.tryAcquire(ctx.inbound.routeName) ? ctx : rateLimited(deps.msUntilReset?.(ctx.inbound.routeName));
}
