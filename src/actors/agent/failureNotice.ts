import { canonicalTarget } from "../../io/targets/names.js";
import { type AgentReply, AgentRunFailure } from "./runner.js";

/**
 * Targets whose messages the public may read: a code host's pull-request or issue comment (also written
 * `github_comment`). A failed run's
 * reason names the model endpoint (often an internal address) and quotes its answers, so there it is left
 * to the gateway's log, as a direct delivery's 502 leaves its reason there.
 */
const PUBLIC_TARGETS: ReadonlySet<string> = new Set(["forge_comment"]);

/**
 * What the route's (or cron job's) target gets when a model run fails (endpoint down, errors after the
 * retries, a malformed answer, the run's timeout), with the run's record; undefined for any other error,
 * which fails the run as before. A chat, SMS or email target gets the reason; a public one, where the
 * gateway's log has it.
 */
export function failureNotice(err: unknown, target: string, deliveryId: string): AgentReply | undefined {
  if (!(err instanceof AgentRunFailure)) return undefined;
  const text = PUBLIC_TARGETS.has(canonicalTarget(target) ?? target)
    ? `⚠️ Agent run failed — the gateway's log says why (delivery ${deliveryId})`
    : `⚠️ Agent run failed: ${err.message}`;
  return { text, record: err.record };
}
