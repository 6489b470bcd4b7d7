import type { Stage } from "../context.js";
import { errorOutcome } from "../types.js";

export const RATE_LIMITED = errorOutcome(429, "Rate limit exceeded");

/** Step 3 of spec 4.2: a fixed window per route name (not global). */
export function rateLimitStage(deps: { tryAcquire(routeName: string): boolean }): Stage {
  return (ctx) => (deps.tryAcquire(ctx.inbound.routeName) ? ctx : RATE_LIMITED);
}
