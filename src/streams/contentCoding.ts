import { brotliDecompressSync, gunzipSync, inflateRawSync, inflateSync } from "node:zlib";
import { errorOutcome, type Outcome } from "./types.js";

/**
 * Request bodies sent with `Content-Encoding` (RFC 9110 §8.4): a sender that compresses its webhooks
 * (GetStream's `webhook_compression_algorithm: gzip`, a client or proxy compressing uploads) signs the
 * JSON it serialised, so the body is decoded before anything reads it — the signature check included —
 * and `max_body_bytes` bounds the decoded body as well as the bytes received. It is decoded once the
 * route's rate limit let the request through (`decodeStage`), so a sender past its quota, signed or not,
 * never makes the gateway inflate a body (a few KB of gzip can ask for `max_body_bytes` of work).
 */

/** The codings svc decodes, as an `Accept-Encoding` value. */
export const DECODED_CODINGS = "gzip, deflate, br";

export const UNSUPPORTED_CODING: Outcome = {
  ...errorOutcome(415, "Unsupported Content-Encoding: send the body uncompressed, or as gzip, deflate or br"),
  // RFC 9110 §15.5.16: a 415 for a content coding names the codings that would have been accepted.
  headers: { "Accept-Encoding": DECODED_CODINGS },
};
/**
 * The most codings undone for one body. Each may inflate up to `max_body_bytes`, so a chain as long as a
 * request head holds (800 on uWS, 26 000 on node:http) held the event loop for seconds per request, signed
 * or not; real senders apply one, and HTTP clients cap their own chains at 5 (undici, urllib3).
 */
export const MAX_CODINGS = 5;

export const TOO_MANY_CODINGS: Outcome = {
  ...errorOutcome(
    415,
    `Unsupported Content-Encoding: more than ${MAX_CODINGS} codings — send the body uncompressed, or compressed once as gzip, deflate or br`,
  ),
  headers: { "Accept-Encoding": DECODED_CODINGS },
};
export const UNDECODABLE = errorOutcome(
  400,
  "Invalid body: it could not be decoded as its Content-Encoding says",
);

const KNOWN = new Set(["gzip", "x-gzip", "deflate", "br", "identity", ""]);

/** The codings of a `Content-Encoding` list that take work to undo (identity and empty entries take none). */
function decodingSteps(codings: readonly string[]): number {
  let steps = 0;
  for (const coding of codings) {
    const name = coding.trim().toLowerCase();
    if (name !== "identity" && name !== "") steps++;
  }
  return steps;
}

/** Bodies handed on as received because their declared coding could not be undone (see `codingProblem`). */
const undecoded = new WeakSet<Buffer>();

/** Each decoded body's bytes as received, for a signature made over the compressed bytes (`receivedBytesOf`). */
const received = new WeakMap<Buffer, Buffer>();

/** Each body as received that was decoded, to its decoded bytes (`decodedBodyOf`). */
const decodedOf = new WeakMap<Buffer, Buffer>();

/**
 * The bytes a decoded body arrived as, or undefined when it was not decoded. A signature is of "the raw body":
 * a sender that compresses after signing (GetStream) signs the decoded JSON, one that signs what it puts on
 * the wire signs these, so the signature check accepts either.
 */
export const receivedBytesOf = (body: Buffer): Buffer | undefined => received.get(body);

/** The decoded body a body as received was read as (the delivery history keeps that), or undefined. */
export const decodedBodyOf = (body: Buffer): Buffer | undefined => decodedOf.get(body);

function decodeOne(coding: string, body: Buffer, maxOutputLength: number): Buffer | undefined {
  switch (coding) {
    case "gzip":
    case "x-gzip":
      return gunzipSync(body, { maxOutputLength });
    case "deflate":
      // "deflate" is zlib-wrapped (RFC 9110 §8.4.1.2); some senders send the raw stream.
      try {
        return inflateSync(body, { maxOutputLength });
      } catch (err) {
        if ((err as { code?: string }).code !== "Z_DATA_ERROR") throw err;
        return inflateRawSync(body, { maxOutputLength });
      }
    case "br":
      return brotliDecompressSync(body, { maxOutputLength });
    case "identity":
    case "":
      return body;
    default:
      return undefined;
  }
}

/**
 * The body with its `Content-Encoding` undone (codings applied in the order listed, so undone from the
 * last), or `too_large` when a decoded body passes `limit`. A body whose coding is unknown or whose
 * bytes are not what it says is handed on as received: the signature check still comes first, and the
 * JSON parse then answers with `codingProblem`.
 */
export function decodeContent(body: Buffer, contentEncoding: string, limit: number): Buffer | "too_large" {
  // No content is no content in any coding (an empty body is then the usual 400 Invalid JSON body).
  if (body.length === 0) return body;
  const codings = contentEncoding.split(",");
  if (codings.length > MAX_CODINGS && decodingSteps(codings) > MAX_CODINGS) {
    undecoded.add(body);
    return body;
  }
  let decoded = body;
  try {
    for (let i = codings.length - 1; i >= 0; i--) {
      const coding = (codings[i] as string).trim().toLowerCase();
      const next = KNOWN.has(coding) ? decodeOne(coding, decoded, limit) : undefined;
      if (next === undefined) {
        undecoded.add(body);
        return body;
      }
      decoded = next;
    }
  } catch (err) {
    if ((err as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") return "too_large";
    undecoded.add(body);
    return body;
  }
  if (decoded !== body) {
    received.set(decoded, body);
    decodedOf.set(body, decoded);
  }
  return decoded;
}

/**
 * Why a body that is not JSON was not: its coding unsupported or too many codings listed (415), or its
 * bytes not in it (400).
 */
export function codingProblem(body: Buffer, headers: Readonly<Record<string, string>>): Outcome | undefined {
  if (!undecoded.has(body)) return undefined;
  const codings = (headers["content-encoding"] ?? "").split(",");
  if (!codings.every((c) => KNOWN.has(c.trim().toLowerCase()))) return UNSUPPORTED_CODING;
  return decodingSteps(codings) > MAX_CODINGS ? TOO_MANY_CODINGS : UNDECODABLE;
}
