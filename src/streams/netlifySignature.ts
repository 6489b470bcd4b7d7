import { createHash } from "node:crypto";
import { type AuthResult, equalDigests, fail, hmac, type VerifyInput } from "./signatureChecks.js";

/**
 * Netlify's outgoing webhooks (deploy notifications) with a "JWS secret token": `X-Webhook-Signature`
 * holds a compact JWS (HS256, keyed with the token) whose payload is `{"iss":"netlify","sha256":<hex
 * SHA-256 of the raw body>}`, as Netlify's own verification example checks it (issuer, algorithm, body
 * digest). Like the generic V1 scheme whose header it shares, it has no replay protection. Pure, never
 * throws, no secret in a reason.
 */

const SEGMENT = /^[A-Za-z0-9_-]+$/;
/** An HS256 signature is 32 bytes: 43 base64url characters, no padding. */
const SIGNATURE = /^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$/;

/** Whether a signature header value has the shape of a compact JWS (hex digests never hold a dot). */
export const looksLikeJws = (value: string): boolean => value.includes(".");

function jsonSegment(segment: string): Record<string, unknown> | undefined {
  if (!SEGMENT.test(segment)) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(segment, "base64url").toString("utf8"));
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

export function netlify(value: string, input: VerifyInput): AuthResult {
  const parts = value.split(".");
  if (parts.length !== 3) return fail("x-webhook-signature is neither hex nor a compact JWS");
  const [head = "", claims = "", signature = ""] = parts;
  const header = jsonSegment(head);
  const payload = jsonSegment(claims);
  if (header === undefined || payload === undefined || !SIGNATURE.test(signature)) {
    return fail("x-webhook-signature is not a well-formed JWS");
  }
  if (header.alg !== "HS256") return fail("x-webhook-signature JWS is not HS256");
  const expected = hmac(input.secret, `${head}.${claims}`);
  if (!equalDigests(Buffer.from(signature, "base64url"), expected)) {
    return fail("x-webhook-signature JWS does not match");
  }
  if (payload.iss !== "netlify") return fail("x-webhook-signature JWS issuer is not netlify");
  const { exp, nbf } = payload;
  if (exp !== undefined && (typeof exp !== "number" || input.nowSeconds >= exp)) {
    return fail("x-webhook-signature JWS has expired");
  }
  if (nbf !== undefined && (typeof nbf !== "number" || input.nowSeconds < nbf)) {
    return fail("x-webhook-signature JWS is not valid yet");
  }
  const digest = createHash("sha256").update(input.body).digest("hex");
  if (typeof payload.sha256 !== "string" || payload.sha256.toLowerCase() !== digest) {
    return fail("x-webhook-signature JWS names another body");
  }
  return { ok: true, scheme: "netlify" };
}
