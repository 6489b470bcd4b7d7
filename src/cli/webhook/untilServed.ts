import type { LocalAnswer } from "../../io/localHttp.js";

/**
 * With `state.backend: redis` a gateway serves a subscription as written once its poll of the store has
 * seen the write (once a second, `docs/durability.md`); until then it answers as before: 404 Unknown
 * route for a new one, the old secret, binding or enabled flag for a changed one. `svc webhook test`
 * right after `svc webhook subscribe` (or enable, disable) waits that long rather than report the
 * gateway's answer to the record as it was.
 */
export const SERVED_WITHIN_MS = 2_000;
const STEP_MS = 100;
/** How long after a write every gateway has read it: its poll's second, and a margin for a busy one. */
export const SEEN_WITHIN_MS = 1_500;

/**
 * How long to wait before sending to a subscription written at `changedAt` (its record's `updated_at`)
 * so that the gateway answers as the record now says: a disable, a new secret or a new binding is
 * served only once the gateway's poll has seen it. 0 for a record older than that (or with no time).
 */
export function settleMs(changedAt: number | undefined, now: number): number {
  if (changedAt === undefined || Number.isNaN(changedAt)) return 0;
  return Math.min(SEEN_WITHIN_MS, Math.max(0, changedAt + SEEN_WITHIN_MS - now));
}

/** The gateway does not (yet) serve the route: the answer of step 1, before anything was read or counted. */
function unknownRoute(answer: LocalAnswer): boolean {
  return answer.status === 404 && answer.text.includes("Unknown route");
}

/**
 * Sends with `post` until the answer is not 404 Unknown route or `withinMs` has passed (`sleep` between
 * tries). A 404 is answered before the rate limit and the delivery id are counted, so a try costs nothing.
 */
export async function untilServed(
  post: () => Promise<LocalAnswer>,
  sleep: (ms: number) => Promise<void>,
  withinMs = SERVED_WITHIN_MS,
): Promise<LocalAnswer> {
  let answer = await post();
  for (let waited = 0; waited < withinMs && unknownRoute(answer); waited += STEP_MS) {
    await sleep(STEP_MS);
    answer = await post();
  }
  return answer;
}
