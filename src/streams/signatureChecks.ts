import { createHash, createHmac, timingSafeEqual } from "node:crypto";

/** The pieces every signature scheme is built from. Pure: no I/O, never throws on malformed input. */

export type AuthScheme =
  | "forge_hmac"
  | "token"
  | "standard_webhooks"
  | "stripe"
  | "linear"
  | "sentry"
  | "pagerduty"
  | "grafana"
  | "shopify"
  | "paddle"
  | "lemon_squeezy"
  | "flux"
  | "generic_v2"
  | "generic_v1"
  | "netlify"
  | "authorization";
export type AuthResult = { ok: true; scheme: AuthScheme } | { ok: false; reason: string };

export interface VerifyInput {
  headers: Readonly<Record<string, string>>;
  body: Buffer;
  secret: string;
  nowSeconds: number;
  /**
   * The body's JSON when `body` is the compressed bytes a sender signed as it sent them: where a scheme
   * that signs its send time into the body (Linear's `webhookTimestamp`) reads it. Absent: `body` itself.
   */
  decodedBody?: Buffer;
}

/** Replay window for timestamped schemes (Standard Webhooks, Stripe, Paddle, Linear, Grafana, generic V2), both directions. */
export const TIMESTAMP_TOLERANCE_SECONDS = 300;

export const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** The value of a base64 character (`A` 0 … `/` 63); only called on characters BASE64 matched. */
function base64Value(code: number): number {
  if (code >= 0x61) return code - 0x61 + 26; // a-z
  if (code >= 0x41) return code - 0x41; // A-Z
  if (code >= 0x30) return code - 0x30 + 52; // 0-9
  return code === 0x2b ? 62 : 63; // + /
}

/**
 * Whether `encoded` (matched by BASE64) is the canonical base64 of its bytes: the bits its last character
 * carries past the final byte are zero (RFC 4648 §3.5). Decoders drop those bits, so a 32-byte HMAC has four
 * spellings that decode alike (a 64-byte signature sixteen); a sender writes only the canonical one, and
 * the reference verifiers (standardwebhooks, svix, Shopify's), which compare the text, refuse the others.
 */
export function canonicalBase64(encoded: string): boolean {
  const padding = encoded.endsWith("==") ? 2 : encoded.endsWith("=") ? 1 : 0;
  if (padding === 0) return true;
  const last = base64Value(encoded.charCodeAt(encoded.length - padding - 1));
  return (last & (padding === 1 ? 0b11 : 0b1111)) === 0;
}

/** A signing key's base64, its padding optional: the reference libraries decode `whsec_` keys either way. */
export const BASE64_KEY = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$/;
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** Whether a credential header may hold `value`: only printable ASCII is read (any other reads as malformed). */
export const readableInHeader = (value: string): boolean => PRINTABLE_ASCII.test(value);
const UNIX_SECONDS = /^[0-9]{1,12}$/;

export type Headers = Readonly<Record<string, string>>;

export function fail(reason: string): AuthResult {
  return { ok: false, reason };
}

/** A header value, or undefined when absent; a non-ASCII or non-string value reads as malformed. */
export function header(headers: Headers, name: string): string | undefined | null {
  if (!Object.hasOwn(headers, name)) return undefined;
  const value: unknown = headers[name];
  if (typeof value !== "string" || !readableInHeader(value)) return null;
  return value;
}

/** The UTF-8 bytes of the secrets last used as keys (a route's secret is one string for the process's life). */
const keyBytesOf = new Map<string, Buffer>();
/** More distinct secrets than routes ever have: the map is emptied rather than grown past it. */
const KEY_BYTES_KEPT = 256;

/**
 * A string key's bytes, made once per secret: `createHmac` given the string converts it on every call
 * (~0.15 µs of a request's ~3 µs HMAC, `bench/README.md`); the digest is the same.
 */
function keyBytes(key: string | Buffer): Buffer {
  if (typeof key !== "string") return key;
  let bytes = keyBytesOf.get(key);
  if (bytes === undefined) {
    if (keyBytesOf.size >= KEY_BYTES_KEPT) keyBytesOf.clear();
    // A buffer of its own, not a slice of Node's shared pool beside other requests' bytes.
    bytes = Buffer.alloc(Buffer.byteLength(key, "utf8"));
    bytes.write(key, "utf8");
    keyBytesOf.set(key, bytes);
  }
  return bytes;
}

export function hmac(key: string | Buffer, ...parts: (string | Buffer)[]): Buffer {
  const mac = createHmac("sha256", keyBytes(key));
  for (const part of parts) mac.update(part);
  // `digest()` allocates a fresh ArrayBuffer per call, which every young-generation GC must sweep (~0.3 µs
  // each, measured with --trace-gc-nvp under load); a string digest copied into Node's buffer pool does not.
  return Buffer.from(mac.digest("binary"), "binary");
}

export function equalDigests(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The sent digest decoded for `checkHexHmac` (used synchronously, so one buffer serves every request). */
const sentDigest = Buffer.alloc(32);

/**
 * Whether `sent` is 64 hex digits naming `expected`. Hex decoding stops at the first pair that is not hex
 * digits, so 64 ASCII characters (as many UTF-8 bytes as characters) decode to 32 bytes exactly when all
 * are hex digits. (Decoding reads only the low byte of a wider character: `٣`, U+0663, would pass as `c`.)
 */
export function checkHexHmac(sent: string, expected: Buffer): boolean {
  return (
    sent.length === 64 &&
    Buffer.byteLength(sent, "utf8") === 64 &&
    sentDigest.write(sent, "hex") === 32 &&
    expected.length === 32 &&
    timingSafeEqual(sentDigest, expected)
  );
}

/**
 * A hex digest as generic senders often write it too, with GitHub's `sha256=` prefix (the same digest: the
 * prefix only names the algorithm).
 */
export const hexDigest = (value: string): string => (value.startsWith("sha256=") ? value.slice(7) : value);

export function checkTimestamp(raw: string | undefined | null, nowSeconds: number): string | undefined {
  if (raw === undefined) return "timestamp header missing";
  if (raw === null || !UNIX_SECONDS.test(raw)) return "timestamp header is not Unix seconds";
  if (Math.abs(nowSeconds - Number(raw)) > TIMESTAMP_TOLERANCE_SECONDS) {
    return `timestamp is more than ${TIMESTAMP_TOLERANCE_SECONDS} s from the server clock`;
  }
  return undefined;
}

/** Digests are compared so neither the secret's length nor its prefix leaks through timing. */
export function equalsSecret(value: string, secret: string): boolean {
  const sent = createHash("sha256").update(value, "utf8").digest();
  const expected = createHash("sha256").update(secret, "utf8").digest();
  return timingSafeEqual(sent, expected);
}
