import { createHash } from "node:crypto";

/**
 * Delivery-ID headers in priority order. Spec 6 names four (`X-Forge-Delivery`, `vendor-id`,
 * `webhook-id`, `X-Request-ID`); each is followed by the real senders' aliases (GitHub's
 * `X-GitHub-Delivery` and the Gitea, Forgejo and Gogs names for it; Svix's `svix-id`). GitLab's
 * `Idempotency-Key`, Linear's `Linear-Delivery`, Jira's `X-Atlassian-Webhook-Identifier`, Shopify's
 * `X-Shopify-Webhook-Id`, PagerDuty's `X-Webhook-Id` (on PagerDuty's requests only) and Bitbucket Cloud's
 * `X-Request-UUID` (all kept across their senders' retries, Bitbucket's counted in `X-Attempt-Number`) come
 * before `X-Request-ID`, which proxies (ingress-nginx, Heroku's router) set to a fresh value per request when
 * the sender sent none: after it, every retry of such a sender behind one was a new delivery. Sentry's
 * `Request-ID` comes last.
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
  "x-webhook-id",
  "x-request-uuid",
  "x-request-id",
  "request-id",
] as const;

/** Longer IDs are replaced by a fixed-size digest so a hostile sender cannot store huge keys. */
export const MAX_DELIVERY_ID_LENGTH = 200;

/**
 * PagerDuty's delivery id. Other senders use the same name for the id of the subscription (the same on
 * every event), which as a delivery id would answer every later event `duplicate`: it is read only on a
 * request that carries PagerDuty's signature header.
 */
const PAGERDUTY_DELIVERY = "x-webhook-id";
const PAGERDUTY_SIGNATURE = "x-pagerduty-signature";

export type DeliveryIdHeader = (typeof DELIVERY_ID_HEADERS)[number];

/** The header the delivery ID is read from: the first present, non-blank one; undefined when none. */
export function deliveryIdHeader(headers: Readonly<Record<string, string>>): DeliveryIdHeader | undefined {
  for (const name of DELIVERY_ID_HEADERS) {
    const value = headers[name];
    if (typeof value !== "string") continue;
    if (name === PAGERDUTY_DELIVERY && headers[PAGERDUTY_SIGNATURE] === undefined) continue;
    if (value.trim().length === 0) continue;
    return name;
  }
  return undefined;
}

/** The first present, non-blank delivery ID, or undefined (the caller then makes a random one). */
export function resolveDeliveryId(headers: Readonly<Record<string, string>>): string | undefined {
  const name = deliveryIdHeader(headers);
  return name === undefined ? undefined : storedDeliveryId((headers[name] as string).trim());
}

/** The ID as the gateway keeps it: itself, or past MAX_DELIVERY_ID_LENGTH its `sha256:<hex>` digest. */
export function storedDeliveryId(id: string): string {
  if (id.length <= MAX_DELIVERY_ID_LENGTH) return id;
  return `sha256:${createHash("sha256").update(id, "utf8").digest("hex")}`;
}
