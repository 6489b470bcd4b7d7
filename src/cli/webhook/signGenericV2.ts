import { createHmac } from "node:crypto";

/** Headers of the generic V2 scheme: hex HMAC-SHA256 of `<timestamp>.<body>`. */
export function signGenericV2(secret: string, body: string, nowSeconds: number): Record<string, string> {
  const timestamp = String(nowSeconds);
  const signature = createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex");
  return { "x-webhook-timestamp": timestamp, "x-webhook-signature-v2": signature };
}
