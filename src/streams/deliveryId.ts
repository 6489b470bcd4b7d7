import { createHash } from "node:crypto";

/**
 * Delivery-ID headers in priority order. Spec 6 names four (`X-Forge-Delivery`, `vendor-id`,
 * `webhook-id`, `X-Request-ID`); each is followed by the real senders' aliases (GitHub's
 * `X-GitHub-Delivery` and the Gitea, Forgejo and Gogs names for it; Svix's `svix-id`). GitLab's
 * `Idempotency-Key`, Linear's `Linear-Delivery`, Jira's `X-Atlassian-Webhook-Identifier` and Shopify's
 * `X-Shopify-Webhook-Id` (kept across their senders' retries) come before `X-Request-ID`, which proxies
 * often set per request. Bitbucket Cloud's `X-Request-UUID` (kept across its retries, which count in
 * `X-Attempt-Number`) and Sentry's `Request-ID` come last.
 */
export const DELIVERY_ID_HEADERS = [
  "x-forge-delivery",
  "x-github-delivery",
  "x-gitea-delivery",
  "x-forgejo-delivery",
  "x-gogs-delivery",
  "vendor-id",
  "svix-id",
  "webhook-id",
  "idempotency-key",
  "linear-delivery",
  "x-atlassian-webhook-identifier",
  "x-shopify-webhook-id",
  "x-request-id",
  "x-request-uuid",
  "request-id",
] as const;

/** Longer IDs are replaced by a fixed-size digest so a hostile sender cannot store huge keys. */
export const MAX_DELIVERY_ID_LENGTH = 200;

/**
 * The first present, non-blank delivery ID header, else the ID the body named (`bodyDeliveryId`), else
 * undefined (the caller then makes a random one).
 */
export function resolveDeliveryId(
  headers: Readonly<Record<string, string>>,
  fromBody?: string,
): string | undefined {
  for (const name of DELIVERY_ID_HEADERS) {
    const value = headers[name];
    if (typeof value !== "string") continue;
    const id = value.trim();
    if (id.length === 0) continue;
    if (id.length <= MAX_DELIVERY_ID_LENGTH) return id;
    return `sha256:${createHash("sha256").update(id, "utf8").digest("hex")}`;
  }
  return fromBody;
}

/**
 * Senders that name a delivery only in their signed body, each known by its signature header: the
 * top-level field holding the event's id, the same on every retry and resend, which the sender tells
 * receivers to deduplicate on. Stripe: `id` (`evt_1NG8Du2eZvKYlo2CUI79vXWy`, `evt_test_65R...`); Paddle
 * Billing: `event_id` (`evt_01h8bx8nxwq6y0x0x0x0x0x0x0`; its `notification_id` changes when a
 * notification is replayed). Only a request carrying that header is read, so no other sender's field is
 * taken for a delivery ID.
 */
const BODY_DELIVERY_IDS = [
  { header: "stripe-signature", field: "id", pattern: /^evt_\w{1,196}$/ },
  { header: "paddle-signature", field: "event_id", pattern: /^evt_\w{1,196}$/ },
] as const;

/** The delivery ID a sender names in its signed body instead of a header (BODY_DELIVERY_IDS), if any. */
export function bodyDeliveryId(
  headers: Readonly<Record<string, string>>,
  payload: Readonly<Record<string, unknown>>,
): string | undefined {
  for (const { header, field, pattern } of BODY_DELIVERY_IDS) {
    if (headers[header] === undefined || !Object.hasOwn(payload, field)) continue;
    const id = payload[field];
    return typeof id === "string" && pattern.test(id) ? id : undefined;
  }
  return undefined;
}
