import type { LoadedConfig } from "../../config/load.js";
import { settingKey } from "../../config/sections/webhook.js";
import { MAX_TIMER_SECONDS } from "../../config/timerSeconds.js";
import type { LocalAnswer } from "../../io/localHttp.js";
import { shellWord } from "../../io/shellWord.js";
import { shownTarget } from "../../io/targets/names.js";
import { terminalText } from "../../io/terminalText.js";
import { parseJson } from "../../streams/jsonNumbers/index.js";
import { unfilledPlaceholders } from "../../streams/template.js";
import type { AnsweringRoute } from "./postToGateway.js";

/**
 * The note `svc webhook test` and `redeliver` write after a failed direct delivery: the gateway answers it
 * `502 Delivery failed` and gives the reason only in its log (a sender must not learn a platform's error),
 * so the note says where to read it, with the delivery ID its lines carry (a redelivery's holds the
 * sender's ID: its control and bidi characters are shown escaped, as `deliveries` shows them).
 */
export function failedDeliveryNote(
  answer: Pick<LocalAnswer, "status">,
  deliveryId: string | undefined,
  name: string,
  route: Pick<AnsweringRoute, "deliver" | "deliver_only">,
  gatewayLog: string,
): string | undefined {
  if (answer.status !== 502 || route.deliver_only !== true) return undefined;
  const grep =
    deliveryId === undefined ? "" : `: grep -F -- ${shellWord(deliveryId)} ${shellWord(gatewayLog)}`;
  return terminalText(
    `Note: the gateway could not deliver ${name}'s message to ${shownTarget(route.deliver)}; the answer gives no reason (a sender must not see the platform's error), the gateway's log does${grep}\n`,
  );
}

/**
 * The note after a `413 Payload too large`: the body's size and the limit it passed, which the answer does
 * not say, and the setting that raises it. Nothing when the body is within the configured limit (the
 * gateway at that address runs with another one).
 */
export function tooLargeNote(
  answer: Pick<LocalAnswer, "status">,
  bodyBytes: number,
  loaded: Pick<LoadedConfig, "config" | "paths">,
  what: string,
): string | undefined {
  const webhook = loaded.config.platforms.webhook;
  if (answer.status !== 413 || bodyBytes <= webhook.max_body_bytes) return undefined;
  return `Note: ${what} is ${bodyBytes} bytes, over ${settingKey(webhook, "max_body_bytes")} (${webhook.max_body_bytes}) — raise it in ${loaded.paths.config} and reload the gateway (SIGHUP) or restart it\n`;
}

/**
 * The note after a `429 Rate limit exceeded`, whose body names neither the limit nor the wait: the route's
 * `rate_limit`, the seconds its `Retry-After` gives until the window reopens (when it is a number: another
 * process may answer without one), and the setting that raises the limit.
 */
export function rateLimitedNote(
  answer: Pick<LocalAnswer, "status" | "retryAfter">,
  name: string,
  loaded: Pick<LoadedConfig, "config" | "paths">,
): string | undefined {
  if (answer.status !== 429) return undefined;
  const webhook = loaded.config.platforms.webhook;
  const seconds =
    answer.retryAfter !== undefined && /^\d+$/.test(answer.retryAfter) ? answer.retryAfter : undefined;
  const reopens =
    seconds === undefined
      ? "until its window reopens (at most 60 s)"
      : `until its window reopens in ${seconds} s (Retry-After)`;
  return terminalText(
    `Note: ${name}'s quota is spent: ${settingKey(webhook, "rate_limit")} lets ${webhook.rate_limit} request${webhook.rate_limit === 1 ? "" : "s"} a minute through per route (signed or not), and the gateway answers it 429 ${reopens} — send it again then, or raise the limit in ${loaded.paths.config} and reload the gateway (SIGHUP)\n`,
  );
}

/**
 * The note after a `202 coalesced`: the event is held in its key's group (spec 3.1), which runs nothing until
 * it fires, up to `max_wait_seconds` later; without it a tester waited for a run that had not started. The
 * answer is the same for an event a run its key's group already dispatched superseded (of an event received
 * after it: it never runs), so the note names both and where to see which, rather than say it is held.
 */
export function coalescedNote(
  answer: Pick<LocalAnswer, "status" | "text">,
  name: string,
  route: Pick<AnsweringRoute, "coalesce">,
  backend: "local" | "redis",
): string | undefined {
  const policy = route.coalesce;
  if (answer.status !== 202 || policy === undefined || !COALESCED.test(answer.text)) return undefined;
  // As the group's timers hold them: a longer window fires at the longest a timer holds.
  const held = (seconds: number) => Math.min(seconds, MAX_TIMER_SECONDS);
  const windows = `${held(policy.window_seconds)} s, at the latest ${held(policy.max_wait_seconds)} s after the group's first event`;
  const superseded =
    "or was superseded by a run its key's group had already dispatched, of an event received after this one (it then never runs)";
  // A group in Redis keeps the windows it was opened with (a reload does not change them), and runs on
  // whichever instance it falls to: its run is in that instance's history.
  return terminalText(
    backend === "redis"
      ? `Note: ${name} coalesces events (coalesce.key ${policy.key}), and a 202 coalesced does not say whether this one is held in its key's group in Redis (opened by it when none was pending), which runs once, with the group's latest event, when no event of that key came for the windows the group was opened with (in this config.yaml: ${windows}), ${superseded} — svc webhook deliveries ${name} shows which; the group's run is in the delivery history of the instance that runs the group\n`
      : `Note: ${name} coalesces events (coalesce.key ${policy.key}), and a 202 coalesced does not say whether this one is held in its key's group (opened by it when none was pending), which runs once, with the group's latest event, when no event of that key came for ${windows}, ${superseded} — svc webhook deliveries ${name} shows which, and the group's run\n`,
  );
}
const COALESCED = /^\{"status":"coalesced"\}$/;

/**
 * The note after a `202 accepted` on a coalescing route whose key the sent payload gives no value (missing,
 * null or empty: the default test payload has no `pull_request.number`): the event was not grouped and its
 * run starts at once, which the answer alone leaves a tester to wonder about. Nothing for a route with a
 * `script` (the key is read from what the script makes of the payload) or a body that is no JSON.
 */
export async function ungroupedNote(
  answer: Pick<LocalAnswer, "status" | "text">,
  name: string,
  route: Pick<AnsweringRoute, "coalesce" | "script">,
  body: string,
  event: string | undefined,
): Promise<string | undefined> {
  const policy = route.coalesce;
  if (answer.status !== 202 || policy === undefined || route.script !== undefined) return undefined;
  if (!ACCEPTED.test(answer.text)) return undefined;
  let payload: unknown;
  try {
    payload = parseJson(body);
  } catch {
    return undefined;
  }
  // Loaded here only: the machines' module brings XState, which no other webhook command needs.
  const { renderCoalesceKey } = await import("../../machines/coalesceGroup.js");
  if (renderCoalesceKey(policy.key, payload, event) !== undefined) return undefined;
  return terminalText(
    `Note: ${name} coalesces events on coalesce.key ${policy.key}, which this payload gives no value (missing, null or empty): the event was not grouped, and its run starts at once — send a payload that has it (--payload) to see it held in its key's group\n`,
  );
}
const ACCEPTED = /^\{"status":"accepted"[,}]/;
const DELIVERED = /^\{"status":"delivered"[,}]/;

/**
 * The note after a `200 delivered` of a direct delivery whose prompt names fields the sent payload lacks
 * (the default test payload has none of a sender's): the chat got those `{placeholders}` as written (a
 * missing key stays literal), which the answer alone does not say. Nothing for a route with a `script`
 * (the prompt may read its output) or a body that is no JSON.
 */
export function unfilledMessageNote(
  answer: Pick<LocalAnswer, "status" | "text">,
  name: string,
  route: Pick<AnsweringRoute, "deliver_only" | "prompt" | "script">,
  body: string,
  event: string | undefined,
): string | undefined {
  if (answer.status !== 200 || route.deliver_only !== true || route.script !== undefined) return undefined;
  if (route.prompt === undefined || !DELIVERED.test(answer.text)) return undefined;
  let payload: unknown;
  try {
    payload = parseJson(body);
  } catch {
    return undefined;
  }
  const missing = unfilledPlaceholders(route.prompt, payload, event);
  if (missing.length === 0) return undefined;
  return terminalText(
    `Note: ${name} delivers its prompt as the message (deliver_only), and this payload has no ${missing.join(", ")}: the message went out with ${missing.map((path) => `{${path}}`).join(", ")} as written — send a payload that has ${missing.length === 1 ? "it" : "them"} (--payload)\n`,
  );
}
