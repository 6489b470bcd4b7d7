import type { LocalAnswer } from "../../io/localHttp.js";

/**
 * With `state.backend: redis` a gateway serves a new subscription once its poll of the store has seen it
 * (once a second, `docs/durability.md`); until then it answers 404 Unknown route. `svc webhook test`
 * right after `svc webhook subscribe` waits that long for it rather than report the 404.
 */
export const SERVED_WITHIN_MS = 2_000;
const STEP_MS = 100;

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
