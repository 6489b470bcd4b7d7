import type { Config } from "../../config/schema.js";
import type { Route } from "../../config/sections/webhook.js";
import { MAX_TIMER_MS } from "../../config/timerSeconds.js";
import { isSvcError, SvcError } from "../../errors.js";
import { type LocalAnswer, localRequest } from "../../io/localHttp.js";
import { canonicalTarget } from "../../io/targets/names.js";

/** What decides how long the gateway may take to answer a request for a route. */
export type AnsweringRoute = Pick<Route, "deliver" | "deliver_only" | "script" | "coalesce" | "prompt">;

/** The gateway answers an agent-mode or cron request once the event is recorded: a few seconds at most. */
const BASE_WAIT_MS = 10_000;
/** A direct delivery may first wait this long for earlier deliveries to the same chat (io/targets/chat.ts). */
const CHAT_QUEUE_WAIT_MS = 10_000;

/**
 * How long `svc webhook test` / `redeliver` wait for the answer: a route with a `script` answers after it
 * ran (up to `script_timeout_seconds`), and a direct delivery (`deliver_only`) only once its platform
 * answered (up to the platform's `timeout_seconds`, after earlier deliveries to the same chat).
 */
export function answerWaitMs(config: Config, route: AnsweringRoute): number {
  let wait = BASE_WAIT_MS;
  if (route.script !== undefined) wait += config.platforms.webhook.script_timeout_seconds * 1000;
  if (route.deliver_only) {
    const platform = canonicalTarget(route.deliver);
    const settings = (config.platforms as Record<string, { timeout_seconds?: number } | undefined>)[
      platform ?? ""
    ];
    wait += CHAT_QUEUE_WAIT_MS + (settings?.timeout_seconds ?? 15) * 1000;
  }
  // Each timeout may be 2147483 s, the longest a timer holds: their sum would not fit one (Node warns).
  return Math.min(wait, MAX_TIMER_MS);
}

/**
 * POSTs a signed request to the running gateway. A gateway that took the request but gave no answer in
 * time, or closed the connection unanswered (killed, crashed), is not "unreachable": it may have delivered
 * it, so the error says where to see how it ended rather than to start the gateway and send it again.
 */
export async function postToGateway(
  url: string,
  request: { readonly headers: Readonly<Record<string, string>>; readonly body: string | Uint8Array },
  route: { readonly name: string; readonly waitMs: number; readonly settings: AnsweringRoute },
  unreachableHint: string,
): Promise<LocalAnswer> {
  try {
    return await localRequest(url, { method: "POST", ...request, timeoutMs: route.waitMs });
  } catch (err) {
    if (isSvcError(err, "gateway_timeout")) {
      const what = route.settings.deliver_only
        ? `a direct delivery answers once ${route.settings.deliver} has answered`
        : route.settings.script !== undefined
          ? "the route's script runs before the answer"
          : "the gateway is busy or stuck";
      throw new SvcError(
        "gateway_timeout",
        `the gateway at ${url} took the request but gave no answer within ${route.waitMs / 1000} s (${what}) — it may still be handling it: svc webhook deliveries ${route.name} shows how it ended, and the gateway log says why`,
      );
    }
    if (isSvcError(err, "outcome_uncertain"))
      throw new SvcError(
        "outcome_uncertain",
        `the gateway at ${url} took the request, then closed the connection without an answer (${err.message}) — it may have stopped or crashed while handling it, and the request may have been handled: svc webhook deliveries ${route.name} shows whether it was, svc gateway status whether the gateway runs, and the gateway log says why`,
      );
    throw new SvcError(
      "delivery_failed",
      `cannot reach the gateway at ${url} (${(err as Error).message}) — ${unreachableHint}`,
    );
  }
}
