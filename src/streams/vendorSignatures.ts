import {
  type AuthResult,
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
  TIMESTAMP_TOLERANCE_SECONDS,
  type VerifyInput,
} from "./signatureChecks.js";

/**
 * Schemes of real senders beyond the five generic ones (svc serves code hosts, issue trackers, payment
 * systems and monitors): each checks one vendor's header. Pure, never throws, no secret in a reason.
 */

/** Stripe: `Stripe-Signature: t=<unix>,v1=<hex>[,v1=<hex>...]` over `<t>.<body>`, keyed by the whole `whsec_...` string. */
export function stripe(value: string | null, input: VerifyInput): AuthResult {
  if (value === null) return fail("stripe-signature is malformed");
  let timestamp: string | undefined;
  const sent: string[] = [];
  for (const part of value.split(",")) {
    const eq = part.indexOf("=");
    const key = part.slice(0, eq).trim();
    const item = part.slice(eq + 1).trim();
    if (key === "t") timestamp = item;
    else if (key === "v1") sent.push(item);
  }
  const stale = checkTimestamp(timestamp, input.nowSeconds);
  if (stale !== undefined) return fail(`stripe-signature ${stale}`);
  const expected = hmac(input.secret, `${timestamp}.`, input.body);
  let matched = false;
  for (const candidate of sent) if (checkHexHmac(candidate, expected)) matched = true;
  return matched ? { ok: true, scheme: "stripe" } : fail("stripe-signature has no matching v1 entry");
}

/**
 * The field's name as bytes, looked for in every body an HMAC of the body alone signed (each GitHub request):
 * a string needle is encoded again on every search, which took about twice as long on a 1 KB body.
 */
const WEBHOOK_TIMESTAMP = Buffer.from("webhookTimestamp");

/** `webhookTimestamp` (Unix milliseconds) at the top of a JSON body, the field Linear signs its time in. */
function bodyTimestampMs(body: Buffer): unknown {
  try {
    const start = body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
    const value: unknown = JSON.parse(body.toString("utf8", start));
    if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
    return Object.hasOwn(value, "webhookTimestamp")
      ? (value as Record<string, unknown>).webhookTimestamp
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Linear: `Linear-Signature` = hex HMAC-SHA256 of the raw body. Linear signs its send time into the body
 * (`webhookTimestamp`, Unix ms) instead of a header, and its own verifier rejects a stale one; a body
 * that carries it must be within the replay window too. A body without it (hand-made senders) passes
 * on the HMAC alone, like the code-host scheme.
 */
export function linear(value: string | null, input: VerifyInput): AuthResult {
  if (value === null) return fail("linear-signature is malformed");
  if (!checkHexHmac(value, hmac(input.secret, input.body))) return fail("linear-signature does not match");
  const stale = staleWebhookTimestamp(input, "linear");
  return stale === undefined ? { ok: true, scheme: "linear" } : fail(stale);
}

/**
 * Why a body's `webhookTimestamp` (Unix ms, where Linear signs its send time) fails the replay window, or
 * undefined when it passes or the body has none. Under `Linear-Signature` it must be a number; a body signed
 * by another header's HMAC of the body alone (the digest Linear sends, which a replayed Linear delivery could
 * carry under any of those headers) is held to the window only when it is one, as Linear writes it.
 */
export function staleWebhookTimestamp(input: VerifyInput, scheme: string): string | undefined {
  const body = input.decodedBody ?? input.body;
  // Most bodies never name it: no parse on the request path for them.
  if (!body.includes(WEBHOOK_TIMESTAMP)) return undefined;
  const sentMs = bodyTimestampMs(body);
  if (sentMs === undefined) return undefined;
  if (typeof sentMs !== "number" || !Number.isFinite(sentMs)) {
    return scheme === "linear" ? "linear webhookTimestamp is not Unix milliseconds" : undefined;
  }
  // In whole seconds, as the gateway's clock is read and the other schemes' timestamps are written: a
  // time within second NOW + 300 is exactly 300 s away, and passes as a Stripe `t=` of that second does.
  if (Math.abs(input.nowSeconds - Math.floor(sentMs / 1000)) <= TIMESTAMP_TOLERANCE_SECONDS) return undefined;
  return `${scheme} webhookTimestamp is more than ${TIMESTAMP_TOLERANCE_SECONDS} s from the server clock`;
}

/** Sentry integrations: `Sentry-Hook-Signature` = hex HMAC-SHA256 of the raw body (nothing else is signed). */
export function sentry(value: string | null, input: VerifyInput): AuthResult {
  if (value === null) return fail("sentry-hook-signature is malformed");
  const ok = checkHexHmac(value, hmac(input.secret, input.body));
  return ok ? { ok: true, scheme: "sentry" } : fail("sentry-hook-signature does not match");
}

/** The timestamp headers svc reads for Grafana: Grafana's documented example name, then a shorter one. */
const GRAFANA_TIMESTAMP_HEADERS = [
  "x-grafana-alerting-signature-timestamp",
  "x-grafana-alerting-timestamp",
] as const;

/**
 * Grafana alerting's webhook contact point (Grafana 12+, "HMAC Signature"): `X-Grafana-Alerting-Signature`
 * = hex HMAC-SHA256 of the raw body, or of `<timestamp>:<body>` when a timestamp header is configured
 * (its name is the user's choice: svc reads the names above), the timestamp then within the replay window.
 */
export function grafana(value: string | null, headers: Headers, input: VerifyInput): AuthResult {
  if (value === null) return fail("x-grafana-alerting-signature is malformed");
  let timestamp: string | null | undefined;
  for (const name of GRAFANA_TIMESTAMP_HEADERS) {
    timestamp = header(headers, name);
    if (timestamp !== undefined) break;
  }
  if (timestamp !== undefined) {
    const stale = checkTimestamp(timestamp, input.nowSeconds);
    if (stale !== undefined) return fail(`x-grafana-alerting-signature ${stale}`);
  }
  const expected =
    timestamp === undefined
      ? hmac(input.secret, input.body)
      : hmac(input.secret, `${timestamp}:`, input.body);
  return checkHexHmac(value, expected)
    ? { ok: true, scheme: "grafana" }
    : fail("x-grafana-alerting-signature does not match");
}

/**
 * PagerDuty v3 webhooks: `X-PagerDuty-Signature: v1=<hex>[,v1=<hex>...]`, hex HMAC-SHA256 of the raw body;
 * several entries while a secret is rotated, any may match.
 */
export function pagerduty(value: string | null, input: VerifyInput): AuthResult {
  if (value === null) return fail("x-pagerduty-signature is malformed");
  const expected = hmac(input.secret, input.body);
  let matched = false;
  for (const part of value.split(",")) {
    const entry = part.trim();
    if (entry.startsWith("v1=") && checkHexHmac(entry.slice(3), expected)) matched = true;
  }
  return matched ? { ok: true, scheme: "pagerduty" } : fail("x-pagerduty-signature has no matching v1 entry");
}

/** Shopify: `X-Shopify-Hmac-Sha256` = base64 HMAC-SHA256 of the raw body, keyed with the app's client secret. */
export function shopify(value: string | null, input: VerifyInput): AuthResult {
  if (value === null || value.length !== 44 || !BASE64.test(value) || !canonicalBase64(value)) {
    return fail("x-shopify-hmac-sha256 is not a base64 SHA-256 digest");
  }
  const ok = equalDigests(Buffer.from(value, "base64"), hmac(input.secret, input.body));
  return ok ? { ok: true, scheme: "shopify" } : fail("x-shopify-hmac-sha256 does not match");
}

/**
 * Paddle Billing: `Paddle-Signature: ts=<unix>;h1=<hex>[;h1=<hex>...]`, hex HMAC-SHA256 of `<ts>:<raw body>`
 * keyed with the notification destination's secret key; any `h1` may match (rotation); timestamp within
 * the replay window.
 */
export function paddle(value: string | null, input: VerifyInput): AuthResult {
  if (value === null) return fail("paddle-signature is malformed");
  let timestamp: string | undefined;
  const sent: string[] = [];
  for (const part of value.split(";")) {
    const eq = part.indexOf("=");
    const key = part.slice(0, eq).trim();
    if (key === "ts") timestamp = part.slice(eq + 1).trim();
    else if (key === "h1") sent.push(part.slice(eq + 1).trim());
  }
  const stale = checkTimestamp(timestamp, input.nowSeconds);
  if (stale !== undefined) return fail(`paddle-signature ${stale}`);
  const expected = hmac(input.secret, `${timestamp}:`, input.body);
  let matched = false;
  for (const candidate of sent) if (checkHexHmac(candidate, expected)) matched = true;
  return matched ? { ok: true, scheme: "paddle" } : fail("paddle-signature has no matching h1 entry");
}

/**
 * Gitea, Forgejo and Gogs: `X-Gitea-Signature` / `X-Forgejo-Signature` / `X-Gogs-Signature` = hex
 * HMAC-SHA256 of the raw body, no prefix (recent Gitea and Forgejo also send `X-Hub-Signature-256`,
 * which is examined first; Gogs and older Gitea send only these).
 */
export function giteaFamily(name: string, value: string | null, input: VerifyInput): AuthResult {
  if (value === null) return fail(`${name} is malformed`);
  const ok = checkHexHmac(value, hmac(input.secret, input.body));
  return ok ? { ok: true, scheme: "forge_hmac" } : fail(`${name} does not match`);
}

/**
 * `X-Signature` = hex HMAC-SHA256 of the raw body: Lemon Squeezy sends the bare digest, Flux's
 * notification-controller (its `generic-hmac` provider) writes it `sha256=<hex>`.
 */
export function lemonSqueezy(value: string | null, input: VerifyInput): AuthResult {
  if (value === null) return fail("x-signature is malformed");
  const ok = checkHexHmac(hexDigest(value), hmac(input.secret, input.body));
  if (!ok) return fail("x-signature does not match");
  return { ok: true, scheme: value.startsWith("sha256=") ? "flux" : "lemon_squeezy" };
}

/** Everything after `Bearer `: a secret with spaces inside is sent whole (Alertmanager's `credentials`). */
const BEARER = /^bearer +(\S(?:.*\S)?) *$/i;
const BASIC = /^basic +([A-Za-z0-9+/]+={0,2}) *$/i;

/**
 * `Authorization: Bearer <secret>`, or `Basic` credentials whose password is the secret (or whose user
 * is, with no password: `https://<secret>@host/...`). Monitors that cannot sign (Prometheus
 * Alertmanager, Grafana, uptime checkers) can send only these; like the token scheme, the secret
 * travels in clear, so use HTTPS.
 */
export function authorization(value: string | null, secret: string): AuthResult {
  if (value === null) return fail("authorization header is malformed");
  const bearer = BEARER.exec(value);
  if (bearer !== null) {
    return equalsSecret(bearer[1] as string, secret)
      ? { ok: true, scheme: "authorization" }
      : fail("bearer token does not match");
  }
  const basic = BASIC.exec(value);
  if (basic === null) return fail("authorization is neither Bearer nor Basic");
  const decoded = Buffer.from(basic[1] as string, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  const user = colon < 0 ? decoded : decoded.slice(0, colon);
  const password = colon < 0 ? "" : decoded.slice(colon + 1);
  const ok = password === "" ? equalsSecret(user, secret) : equalsSecret(password, secret);
  return ok ? { ok: true, scheme: "authorization" } : fail("basic credentials do not match");
}
