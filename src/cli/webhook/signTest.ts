import { createHmac, randomUUID } from "node:crypto";
import { signGenericV2 } from "./signGenericV2.js";

/**
 * The signature headers a test event carries. The gateway recognises the scheme from the headers, so the
 * generic V2 scheme fits every secret; a `whsec_` secret is a Standard Webhooks / Svix signing key, and is
 * signed the way those senders sign (HMAC-SHA256 keyed with the base64-decoded key), so the test takes the
 * path real events take.
 */
export function signTestEvent(secret: string, body: string, nowSeconds: number): Record<string, string> {
  if (!secret.startsWith("whsec_")) return signGenericV2(secret, body, nowSeconds);
  const id = `msg_svc_test_${randomUUID()}`;
  const timestamp = String(nowSeconds);
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  const signature = createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64");
  return { "webhook-id": id, "webhook-timestamp": timestamp, "webhook-signature": `v1,${signature}` };
}
