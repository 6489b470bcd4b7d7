import { createPublicKey, type KeyObject, verify } from "node:crypto";
import { BASE64_KEY } from "./signatureChecks.js";

/**
 * Standard Webhooks' asymmetric signatures: the sender signs `<id>.<timestamp>.<body>` with an Ed25519
 * secret key (`whsk_...`) and sends `v1a,<base64 signature>` in `webhook-signature`; the receiver holds
 * only the public key, `whpk_` followed by the base64 of its 32 bytes. A public key is not a secret, so a
 * route whose secret is one verifies these signatures and nothing keyed with the secret itself.
 * Pure, never throws.
 */

export const PUBLIC_KEY_PREFIX = "whpk_";

/** The DER header of an Ed25519 SubjectPublicKeyInfo (RFC 8410 §4), followed by the 32 key bytes. */
const ED25519_SPKI_HEADER = Buffer.from("302a300506032b6570032100", "hex");

/** Whether the route secret is a Standard Webhooks public key (verifies `v1a` signatures only). */
export const isPublicKeySecret = (secret: string): boolean => secret.startsWith(PUBLIC_KEY_PREFIX);

/** Parsed keys by secret text: a route's key is parsed once, not per request. */
const parsed = new Map<string, KeyObject | null>();
const MAX_PARSED = 256;

/** The Ed25519 public key a `whpk_` secret encodes, or undefined when it encodes none (not base64, not 32 bytes). */
export function whpkKey(secret: string): KeyObject | undefined {
  const known = parsed.get(secret);
  if (known !== undefined) return known ?? undefined;
  let key: KeyObject | null = null;
  const encoded = secret.slice(PUBLIC_KEY_PREFIX.length);
  if (isPublicKeySecret(secret) && encoded.length > 0 && BASE64_KEY.test(encoded)) {
    const raw = Buffer.from(encoded, "base64");
    if (raw.length === 32) {
      try {
        key = createPublicKey({
          key: Buffer.concat([ED25519_SPKI_HEADER, raw]),
          format: "der",
          type: "spki",
        });
      } catch {
        key = null;
      }
    }
  }
  if (parsed.size >= MAX_PARSED) parsed.clear();
  parsed.set(secret, key);
  return key ?? undefined;
}

/** An Ed25519 signature is 64 bytes. */
const SIGNATURE_BYTES = 64;

/** Whether `signature` is `key`'s Ed25519 signature of `signed`. */
export function verifiesEd25519(key: KeyObject, signed: Buffer, signature: Buffer): boolean {
  if (signature.length !== SIGNATURE_BYTES) return false;
  try {
    return verify(null, signed, key, signature);
  } catch {
    return false;
  }
}
