import { z } from "zod";

/** The longest delay a Node.js timer holds (2^31 - 1 ms, about 24.8 days); a longer one fires after 1 ms. */
export const MAX_TIMER_MS = 2_147_483_647;
export const MAX_TIMER_SECONDS = Math.floor(MAX_TIMER_MS / 1000);

/** What to write instead of `.inf` or `1e400` for a duration that counts as MAX_TIMER_SECONDS past it. */
export const FINITE_SECONDS = `write a finite number of seconds; one above ${MAX_TIMER_SECONDS} (about 24.8 days, the longest a timer holds) counts as ${MAX_TIMER_SECONDS}`;

/** The keys whose durations are capped at MAX_TIMER_SECONDS (timerSeconds, coalesce windows, MCP timeouts). */
export const TIMER_SECONDS_KEYS: ReadonlySet<string> = new Set([
  "timeout_seconds",
  "script_timeout_seconds",
  "window_seconds",
  "max_wait_seconds",
  "timeout",
  "connect_timeout",
  "keepalive_interval",
  "idle_timeout_seconds",
  "max_lifetime_seconds",
]);

/**
 * A timeout in seconds (> 0) that a timer can hold: a longer one (`timeout_seconds: 3000000` for
 * "practically never") counts as MAX_TIMER_SECONDS instead of timing out after 1 ms.
 */
export const timerSeconds = (fallback: number) =>
  z
    .number()
    .positive()
    .default(fallback)
    .transform((n) => Math.min(n, MAX_TIMER_SECONDS));
