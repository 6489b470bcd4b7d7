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
 * A Stripe event id: `evt_` and letters, digits or `_` (`evt_1NG8Du2eZvKYlo2CUI79vXWy`, `evt_test_65R...`),
 * at most MAX_DELIVERY_ID_LENGTH characters in all.
 */
const STRIPE_EVENT_ID = /^evt_\w{1,196}$/;

/**
 * The delivery ID a sender names in its signed body instead of a header: Stripe's event id (the body's
 * top-level `id`), the same on every retry and dashboard resend of the event, and the key Stripe tells
 * receivers to deduplicate on. Read only from a request that carries `Stripe-Signature`, so no other
 * sender's `id` field is taken for a delivery ID.
 */
export function bodyDeliveryId(
  headers: Readonly<Record<string, string>>,
  payload: Readonly<Record<string, unknown>>,
): string | undefined {
  if (headers["stripe-signature"] === undefined || !Object.hasOwn(payload, "id")) return undefined;
  const id = payload.id;
  return typeof id === "string" && STRIPE_EVENT_ID.test(id) ? id : undefined;
}
