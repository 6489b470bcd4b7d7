import { createHmac, randomUUID } from "node:crypto";
import { SvcError } from "../../errors.js";
import { isPublicKeySecret } from "../../streams/publicKeySignature.js";
import { whsecKey } from "../../streams/signatures.js";

/**
 * The signature headers a test event or a redelivery carries. The gateway recognises the scheme from the
 * headers, so the generic V2 scheme (hex HMAC-SHA256 of `<timestamp>.<body>`) fits every secret; a `whsec_`
 * secret is a Standard Webhooks / Svix signing key, and is signed the way those senders sign (HMAC-SHA256
 * of `<id>.<timestamp>.<body>` keyed with the base64-decoded key), so the request takes the path real
 * events take.
 */
export function signTestEvent(
  secret: string,
  body: string | Buffer,
  nowSeconds: number,
  /** The message ID a `whsec_` signature covers (sent as `webhook-id`, the delivery ID the gateway takes). */
  messageId = `msg_svc_test_${randomUUID()}`,
): Record<string, string> {
  if (isPublicKeySecret(secret))
    throw new SvcError(
      "usage",
      "the route's secret is a Standard Webhooks public key (whpk_): only the sender, which holds the secret key, can sign events for it, so svc cannot send it a test event or a redelivery — have the sender send (or resend) one",
    );
  const timestamp = String(nowSeconds);
  // A whsec_ secret that encodes no key is verified as a generic one (the gateway's rule, shared).
  const key = whsecKey(secret);
  if (key === undefined) {
    const signature = createHmac("sha256", secret).update(`${timestamp}.`).update(body).digest("hex");
    return { "x-webhook-timestamp": timestamp, "x-webhook-signature-v2": signature };
  }
  const id = messageId;
  const signature = createHmac("sha256", key).update(`${id}.${timestamp}.`).update(body).digest("base64");
  return { "webhook-id": id, "webhook-timestamp": timestamp, "webhook-signature": `v1,${signature}` };
}
