import { z } from "zod";

/** The longest delay a Node.js timer holds (2^31 - 1 ms, about 24.8 days); a longer one fires after 1 ms. */
export const MAX_TIMER_MS = 2_147_483_647;
export const MAX_TIMER_SECONDS = Math.floor(MAX_TIMER_MS / 1000);

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
