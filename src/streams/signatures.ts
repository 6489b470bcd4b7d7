import { missingSignatureReason } from "./missingSignature.js";
import { looksLikeJws, netlify } from "./netlifySignature.js";
import { isPublicKeySecret, verifiesEd25519, whpkKey } from "./publicKeySignature.js";
import {
  type AuthResult,
  type AuthScheme,
  BASE64,
  canonicalBase64,
  checkHexHmac,
  checkTimestamp,
  equalDigests,
  equalsSecret,
  fail,
  type Headers,
  header,
  hexDigest,
  hmac,
  type VerifyInput,
} from "./signatureChecks.js";
import {
  authorization,
  giteaFamily,
  grafana,
  lemonSqueezy,
  linear,
  paddle,
  pagerduty,
  sentry,
  shopify,
  staleWebhookTimestamp,
  stripe,
} from "./vendorSignatures.js";

export {
  type AuthResult,
  type AuthScheme,
  TIMESTAMP_TOLERANCE_SECONDS,
  type VerifyInput,
} from "./signatureChecks.js";

/**
 * Sender authentication: the spec's schemes and the order in which the header families are
 * examined (the first present decides). Pure: no I/O, never throws, never puts the secret in a reason.
 */

/** Self-hosted code hosts' own signature headers (hex, no `sha256=` prefix), after GitHub's names. */
const GITEA_FAMILY = ["x-gitea-signature", "x-forgejo-signature", "x-gogs-signature"] as const;

/**
 * A code-host signature header that carries no digest. Gitea and Forgejo send every one of their
 * signature headers on every delivery, empty when the hook has no secret (`X-Hub-Signature-256: sha256=`,
 * `X-Gitea-Signature: `); such a hook may authenticate with their "Authorization header" option instead.
 * An empty header is skipped like an absent one, so the headers after it decide (401 when none passes).
 */
const noDigest = (value: string | null | undefined, prefix = ""): boolean => value === "" || value === prefix;

function forgeHmac(value: string | null, input: VerifyInput, name = "x-hub-signature-256"): AuthResult {
  if (value === null || !value.startsWith("sha256=")) return fail(`${name} is not sha256=<hex>`);
  const ok = checkHexHmac(value.slice("sha256=".length), hmac(input.secret, input.body));
  return ok ? { ok: true, scheme: "forge_hmac" } : fail(`${name} does not match`);
}

function token(value: string | null, secret: string): AuthResult {
  if (value === null) return fail("token header is malformed");
  return equalsSecret(value, secret) ? { ok: true, scheme: "token" } : fail("token does not match");
}

/**
 * Base64 as the reference libraries (standardwebhooks, svix: @stablelib/base64) decode a secret: base64
 * characters of any count, then at most two `=`. A character left over after the last group of four adds
 * no byte (`topsecret` is the key of `topsecre`), as there and in `Buffer.from(_, "base64")`.
 */
const LIBRARY_BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** The key `encoded` decodes to as a Standard Webhooks secret; undefined when it is no base64 or no byte. */
function decodedKey(encoded: string): Buffer | undefined {
  if (!LIBRARY_BASE64.test(encoded)) return undefined;
  const key = Buffer.from(encoded, "base64");
  // No empty key (`A` encodes no byte): an HMAC keyed with nothing is one anyone can compute.
  return key.length > 0 ? key : undefined;
}

/**
 * The HMAC keys a Standard Webhooks secret may stand for. A `whsec_` secret is, by the Standard Webhooks
 * specification, the base64 of the key: only the decoded bytes verify (as in the reference libraries,
 * standardwebhooks and svix), never the UTF-8 text of the whole string, and a `whsec_` secret that is
 * not base64 verifies nothing. A secret without the prefix may be either the base64 key pasted bare
 * (the libraries decode it) or a plain text secret that hand-rolled senders key the HMAC with.
 */
/** The key a `whsec_` secret encodes (base64, padded or not); undefined when it encodes none. */
export function whsecKey(secret: string): Buffer | undefined {
  return secret.startsWith("whsec_") ? decodedKey(secret.slice("whsec_".length)) : undefined;
}

function standardWebhooksKeys(secret: string): Buffer[] {
  if (secret.startsWith("whsec_")) {
    const key = whsecKey(secret);
    return key === undefined ? [] : [key];
  }
  const keys: Buffer[] = [Buffer.from(secret, "utf8")];
  const decoded = decodedKey(secret);
  if (decoded !== undefined) keys.unshift(decoded);
  return keys;
}

/** The `v1a` entries of one request that are verified (a rotation sends two or three). */
const MAX_V1A_ENTRIES = 8;

function standardWebhooks(prefix: "webhook-" | "svix-", headers: Headers, input: VerifyInput): AuthResult {
  const id = header(headers, `${prefix}id`);
  const timestamp = header(headers, `${prefix}timestamp`);
  const signatures = header(headers, `${prefix}signature`);
  if (id === undefined || id === null || id.length === 0) return fail(`${prefix}id missing or malformed`);
  const stale = checkTimestamp(timestamp, input.nowSeconds);
  if (stale !== undefined) return fail(`${prefix}${stale}`);
  if (signatures === undefined || signatures === null) return fail(`${prefix}signature missing or malformed`);
  // A public key (whpk_) verifies the asymmetric v1a entries; any other secret, the HMAC v1 entries.
  const publicKey = isPublicKeySecret(input.secret);
  const version = publicKey ? "v1a" : "v1";
  const sent: Buffer[] = [];
  for (const part of signatures.split(" ")) {
    // A repeated header arrives joined with ", ": "v1,<a>, v1,<b>" leaves a trailing comma on <a>.
    const entry = part.endsWith(",") ? part.slice(0, -1) : part;
    const comma = entry.indexOf(",");
    if (comma < 0 || entry.slice(0, comma) !== version) continue;
    const encoded = entry.slice(comma + 1);
    if (BASE64.test(encoded) && canonicalBase64(encoded)) sent.push(Buffer.from(encoded, "base64"));
  }
  if (publicKey) {
    const key = whpkKey(input.secret);
    if (key === undefined)
      return fail("the route secret starts with whpk_ but is not a base64 Ed25519 public key");
    const signed = Buffer.concat([Buffer.from(`${id}.${timestamp}.`), input.body]);
    // Each entry costs a signature verification (not one HMAC for all): a header crammed with entries
    // gets its first few checked, as many as a key rotation needs.
    const verified = sent
      .slice(0, MAX_V1A_ENTRIES)
      .some((candidate) => verifiesEd25519(key, signed, candidate));
    return verified
      ? { ok: true, scheme: "standard_webhooks" }
      : fail(`${prefix}signature has no matching v1a entry`);
  }
  const keys = standardWebhooksKeys(input.secret);
  if (keys.length === 0) return fail("the route secret starts with whsec_ but the rest is not base64");
  let matched = false;
  for (const key of keys) {
    const expected = hmac(key, `${id}.${timestamp}.`, input.body);
    for (const candidate of sent) if (equalDigests(candidate, expected)) matched = true;
  }
  return matched
    ? { ok: true, scheme: "standard_webhooks" }
    : fail(`${prefix}signature has no matching v1 entry`);
}

function genericV2(value: string | null, headers: Headers, input: VerifyInput): AuthResult {
  const timestamp = header(headers, "x-webhook-timestamp");
  const stale = checkTimestamp(timestamp, input.nowSeconds);
  if (stale !== undefined) return fail(`x-webhook-${stale}`);
  if (value === null) return fail("x-webhook-signature-v2 is malformed");
  const ok = checkHexHmac(hexDigest(value), hmac(input.secret, `${timestamp}.`, input.body));
  return ok ? { ok: true, scheme: "generic_v2" } : fail("x-webhook-signature-v2 does not match");
}

function genericV1(value: string | null, input: VerifyInput): AuthResult {
  if (value === null) return fail("x-webhook-signature is malformed");
  // Netlify sends a compact JWS under the same header name (a hex digest never holds a dot).
  if (looksLikeJws(value)) return netlify(value, input);
  const ok = checkHexHmac(hexDigest(value), hmac(input.secret, input.body));
  return ok ? { ok: true, scheme: "generic_v1" } : fail("x-webhook-signature does not match");
}

/**
 * Schemes whose signature is the HMAC-SHA256 of the raw body alone under the route secret: the digest Linear
 * sends in `Linear-Signature`. A Linear delivery replayed under one of their headers would skip the check of
 * its `webhookTimestamp`, so a body carrying one is held to the replay window whichever of them signed it.
 */
const BODY_HMAC_SCHEMES: ReadonlySet<AuthScheme> = new Set<AuthScheme>([
  "forge_hmac",
  "generic_v1",
  "sentry",
  "pagerduty",
  "shopify",
  "grafana",
  "lemon_squeezy",
  "flux",
]);

function verify(input: VerifyInput): AuthResult {
  const result = verifyByHeaders(input);
  if (!result.ok || !BODY_HMAC_SCHEMES.has(result.scheme)) return result;
  const stale = staleWebhookTimestamp(input, result.scheme);
  return stale === undefined ? result : fail(stale);
}

function verifyByHeaders(input: VerifyInput): AuthResult {
  const { headers } = input;
  if (typeof input.secret !== "string" || input.secret.length === 0) return fail("no secret configured");
  if (!Buffer.isBuffer(input.body)) return fail("body is not a buffer");
  if (isPublicKeySecret(input.secret)) return publicKeyOnly(input);

  const codeHost = codeHostSignature(headers);
  if (codeHost !== undefined) {
    const [name, value] = codeHost;
    if (name === "x-hub-signature-256") return forgeHmac(value, input);
    if (name === "x-hub-signature") return forgeHmac(value, input, "x-hub-signature");
    return giteaFamily(name, value, input);
  }

  const forgeToken = header(headers, "x-alt-forge-token");
  const sentToken = forgeToken !== undefined ? forgeToken : header(headers, "x-gitlab-token");
  if (sentToken !== undefined) {
    const byToken = token(sentToken, input.secret);
    // GitLab with both a secret token and a signing token configured sends X-Gitlab-Token and a
    // Standard Webhooks signature; the route secret may hold either one. A request carrying the token
    // in clear gains nothing from the signature's replay window, so either passing is enough.
    if (byToken.ok || !Object.hasOwn(headers, "webhook-signature")) return byToken;
    return standardWebhooks("webhook-", headers, input);
  }

  // Keyed on the signature header alone: `webhook-id` by itself is also a delivery-ID header
  // that generic senders may send, and must not turn their request into a Standard Webhooks one.
  if (Object.hasOwn(headers, "webhook-signature")) return standardWebhooks("webhook-", headers, input);
  if (Object.hasOwn(headers, "svix-signature")) return standardWebhooks("svix-", headers, input);

  const stripeSignature = header(headers, "stripe-signature");
  if (stripeSignature !== undefined) return stripe(stripeSignature, input);

  const linearSignature = header(headers, "linear-signature");
  if (linearSignature !== undefined) return linear(linearSignature, input);
  const sentrySignature = header(headers, "sentry-hook-signature");
  if (sentrySignature !== undefined) return sentry(sentrySignature, input);
  const pagerdutySignature = header(headers, "x-pagerduty-signature");
  if (pagerdutySignature !== undefined) return pagerduty(pagerdutySignature, input);
  const grafanaSignature = header(headers, "x-grafana-alerting-signature");
  if (grafanaSignature !== undefined) return grafana(grafanaSignature, headers, input);
  const shopifySignature = header(headers, "x-shopify-hmac-sha256");
  if (shopifySignature !== undefined) return shopify(shopifySignature, input);
  const paddleSignature = header(headers, "paddle-signature");
  if (paddleSignature !== undefined) return paddle(paddleSignature, input);

  // Once the V2 header is present the request is judged as V2 only: never downgraded to V1.
  const v2 = header(headers, "x-webhook-signature-v2");
  if (v2 !== undefined) return genericV2(v2, headers, input);
  const v1 = header(headers, "x-webhook-signature");
  if (v1 !== undefined) return genericV1(v1, input);
  // A header name other senders may use for other formats: consulted only after the spec's schemes.
  const lemonSignature = header(headers, "x-signature");
  if (lemonSignature !== undefined) return lemonSqueezy(lemonSignature, input);

  const credentials = header(headers, "authorization");
  if (credentials !== undefined) return authorization(credentials, input.secret);

  return fail(missingSignatureReason(headers));
}

/**
 * A route whose secret is a Standard Webhooks public key (`whpk_`): anyone may know it, so no scheme keyed
 * with the secret (HMAC, token, bearer) may pass; only Standard Webhooks `v1a` (Ed25519) signatures.
 */
function publicKeyOnly(input: VerifyInput): AuthResult {
  const { headers } = input;
  const codeHost = codeHostSignature(headers);
  const prefix = Object.hasOwn(headers, "webhook-signature")
    ? "webhook-"
    : Object.hasOwn(headers, "svix-signature")
      ? "svix-"
      : undefined;
  if (codeHost !== undefined && prefix !== undefined) {
    return fail(
      `the route secret is a public key (whpk_), and ${codeHost[0]} decides before ${prefix}signature`,
    );
  }
  if (prefix !== undefined) return standardWebhooks(prefix, headers, input);
  return fail("the route secret is a public key (whpk_): only Standard Webhooks v1a signatures verify");
}

/**
 * The code-host signature header that, present with a digest, decides a request before the Standard Webhooks
 * headers are looked at; a GitLab token does not, as GitLab sends it beside them.
 */
function codeHostSignature(
  headers: VerifyInput["headers"],
):
  | [name: "x-hub-signature-256" | "x-hub-signature" | (typeof GITEA_FAMILY)[number], value: string | null]
  | undefined {
  const hub = header(headers, "x-hub-signature-256");
  if (hub !== undefined && !noDigest(hub, "sha256=")) return ["x-hub-signature-256", hub];
  // Bitbucket (Cloud and Data Center) sends the same sha256=<hex> in X-Hub-Signature, the header where
  // GitHub puts its legacy sha1 (which is not a recognized scheme: such a request falls through).
  const bitbucket = header(headers, "x-hub-signature");
  if (bitbucket?.startsWith("sha256=") && !noDigest(bitbucket, "sha256="))
    return ["x-hub-signature", bitbucket];
  for (const name of GITEA_FAMILY) {
    const value = header(headers, name);
    if (value !== undefined && !noDigest(value)) return [name, value];
  }
  return undefined;
}

/** First header family present wins; any malformed input is a plain failure. */
export function verifySignature(input: VerifyInput): AuthResult {
  try {
    return verify(input);
  } catch {
    return fail("signature check failed on malformed input");
  }
}
