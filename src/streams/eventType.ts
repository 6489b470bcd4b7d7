import { isPlainRecord } from "./payloadPath.js";

/**
 * Event-type sources in priority order: each documented header name is followed by the real
 * sender's name for the same header (GitHub, then GitLab), then the senders' own: Gitea, Forgejo and
 * Gogs (the first two also send `X-GitHub-Event`), Bitbucket's `X-Event-Key`, Linear's `Linear-Event`
 * (its body's `type`), Sentry's `Sentry-Hook-Resource` (`issue`), Shopify's `X-Shopify-Topic`
 * (`orders/create`) and Lemon Squeezy's `X-Event-Name` (`order_created`).
 */
export const EVENT_TYPE_HEADERS = [
  "x-forge-event",
  "x-github-event",
  "x-alt-forge-event",
  "x-gitlab-event",
  "x-gitea-event",
  "x-forgejo-event",
  "x-gogs-event",
  "x-event-key",
  "linear-event",
  "sentry-hook-resource",
  "x-shopify-topic",
  "x-event-name",
] as const;

/**
 * Body fields that name the event when no header does: the spec's `event_type`, then `type`, where
 * Standard Webhooks, Svix and Stripe put it (they send no event header), then Jira's `webhookEvent`
 * (`jira:issue_created`) and Azure DevOps' `eventType` (`git.push`).
 */
export const EVENT_TYPE_FIELDS = ["event_type", "type", "webhookEvent", "eventType"] as const;

/**
 * The event type as sent: the first non-empty header above, else the first non-empty string field
 * above at the top of the JSON body. Never case-folded or trimmed, because `events` compares it
 * verbatim (`Merge Request Hook` and `merge_request` are different events).
 */
export function resolveEventType(
  headers: Readonly<Record<string, string>>,
  payload: unknown,
): string | undefined {
  const named = headerEventType(headers);
  if (named !== undefined) return named;
  if (!isPlainRecord(payload)) return undefined;
  for (const field of EVENT_TYPE_FIELDS) {
    const fromBody = Object.hasOwn(payload, field) ? payload[field] : undefined;
    if (typeof fromBody === "string" && fromBody.length > 0) return fromBody;
  }
  return undefined;
}

/** The event type the first non-empty header above names, if one does (no body read). */
export function headerEventType(headers: Readonly<Record<string, string>>): string | undefined {
  for (const name of EVENT_TYPE_HEADERS) {
    const value = headers[name];
    if (typeof value === "string" && value.length > 0) return value;
  }
  return undefined;
}

/**
 * What an answer's `event` says when the request names no event type (no header above, no body
 * field): the word senders and testers of such receivers expect, where `null` would break a client
 * reading it as a string. Inside the gateway the event stays absent, so `events` lists, filters and
 * templates see no event.
 */
export const UNNAMED_EVENT = "unknown";

/**
 * `ping` (GitHub's hook-created event) and `diagnostics:ping` (Bitbucket Data Center's "Test
 * connection"). GitLab has no ping event (its "Test" button sends a real event type such as
 * `Push Hook`), so nothing else is treated as a ping.
 */
export function isPingEvent(event: string | undefined): boolean {
  return event === "ping" || event === "diagnostics:ping";
}
