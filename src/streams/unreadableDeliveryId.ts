import type { DeliveryIdHeader } from "./deliveryId.js";
import { errorOutcome, type Outcome } from "./types.js";

/** Each delivery-ID header as senders write its name, for the answer that names it. */
const WRITTEN: Readonly<Record<DeliveryIdHeader, string>> = {
  "x-forge-delivery": "X-Forge-Delivery",
  "x-github-delivery": "X-GitHub-Delivery",
  "x-gitea-delivery": "X-Gitea-Delivery",
  "x-forgejo-delivery": "X-Forgejo-Delivery",
  "x-gogs-delivery": "X-Gogs-Delivery",
  "vendor-id": "vendor-id",
  "svix-id": "svix-id",
  "webhook-id": "webhook-id",
  "idempotency-key": "Idempotency-Key",
  "linear-delivery": "Linear-Delivery",
  "x-atlassian-webhook-identifier": "X-Atlassian-Webhook-Identifier",
  "x-shopify-webhook-id": "X-Shopify-Webhook-Id",
  "x-webhook-id": "X-Webhook-Id",
  "x-request-uuid": "X-Request-UUID",
  "x-request-id": "X-Request-ID",
  "request-id": "Request-ID",
};

/** Made once, so the refusal allocates nothing per request. */
const REFUSALS = new Map<string, Outcome>(
  Object.entries(WRITTEN).map(([name, written]) => [
    name,
    errorOutcome(
      400,
      `Bad request: the delivery ID in ${written} is not UTF-8 text (a byte that is not UTF-8 reads as U+FFFD, so two IDs could not be told apart) — send it as UTF-8, printable ASCII at best`,
    ),
  ]),
);

/**
 * The 400 for a delivery ID read from `header` with U+FFFD in it, else undefined. Both HTTP servers read
 * header values as UTF-8 and uWS exposes no raw bytes, so every byte that is not UTF-8 reads as the same
 * U+FFFD: `a\xffb` and `a\xfeb` would be one idempotency key and the second delivery answered `duplicate`,
 * never run. A U+FFFD sent as UTF-8 cannot be told from those and is refused alike.
 */
export function unreadableDeliveryId(header: DeliveryIdHeader, value: string): Outcome | undefined {
  return value.includes("\uFFFD") ? REFUSALS.get(header) : undefined;
}
