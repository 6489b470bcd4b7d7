import { isUtf8 } from "node:buffer";
import { codingProblem } from "../contentCoding.js";
import { type Stage, withCtx } from "../context.js";
import { formPayload, isForm } from "../formBody.js";
import { JsonTooDeep, parseJson } from "../jsonNumbers/index.js";
import { errorOutcome, type Outcome } from "../types.js";

export const INVALID_JSON = errorOutcome(400, "Invalid JSON body");
export const NOT_AN_OBJECT = errorOutcome(400, "Invalid JSON body: expected a JSON object");
export const NOT_UTF8 = errorOutcome(400, "Invalid JSON body: not UTF-8");
export const TOO_DEEP = errorOutcome(400, "Invalid JSON body: nested too deeply");

export { isForm } from "../formBody.js";

/**
 * A text in UTF-16 or UTF-32 without its byte order mark (PowerShell and .NET's `Encoding.Unicode`): its
 * first character, ASCII as JSON's first character always is, comes with a NUL beside it. Such bytes pass
 * as UTF-8, but no JSON text starts with a NUL, so the body is named for its encoding, not as bad JSON.
 */
function wideText(body: Buffer, start: number): boolean {
  return body.length >= start + 2 && (body[start] === 0 || body[start + 1] === 0);
}

type Parsed = { readonly payload: Record<string, unknown> } | { readonly failed: Outcome };

function parseJsonObject(body: Buffer): Parsed {
  // A UTF-8 byte order mark some senders prepend is not JSON; RFC 8259 §8.1 lets parsers ignore it.
  const start = body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
  let value: unknown;
  try {
    // parseJson: numbers keep the text the sender wrote (`1.0`, ids past 2^53) for templates and scripts;
    // nesting past MAX_JSON_DEPTH (512) is refused, as what renders the payload would overflow its stack.
    value = parseJson(body.toString("utf8", start));
  } catch (err) {
    if (err instanceof JsonTooDeep) return { failed: TOO_DEEP };
    return { failed: wideText(body, start) ? NOT_UTF8 : INVALID_JSON };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { failed: NOT_AN_OBJECT };
  return { payload: value as Record<string, unknown> };
}

/**
 * Step 5 of the processing order (docs/webhook.md). A body that is valid JSON but not an object (array, string, number, null) is
 * also a 400: filters, templates and `event_type` all address fields of an object. JSON text is UTF-8
 * (RFC 8259 §8.1), so other bytes are a 400 rather than silently replaced by U+FFFD. The signature was
 * checked on the raw body, so a form-encoded body is unwrapped only here; when the signature covered only
 * the form's `payload` field (Gitea, Forgejo, Gogs), exactly those bytes are the payload.
 */
export const parseStage: Stage = (ctx) => {
  const { body } = ctx.inbound;
  // A body still in a Content-Encoding svc could not undo is named as that (415 or 400), not as bad JSON.
  if (!isUtf8(body)) return codingProblem(body, ctx.inbound.headers) ?? NOT_UTF8;
  if (ctx.signedFormPayload !== undefined) {
    if (!isUtf8(ctx.signedFormPayload)) return NOT_UTF8;
    const signed = parseJsonObject(ctx.signedFormPayload);
    return "failed" in signed ? signed.failed : withCtx(ctx, { payload: signed.payload });
  }
  let parsed = parseJsonObject(body);
  // The body is tried as JSON first whatever its content type says: `curl -d '{...}'` labels plain
  // JSON as a form. Only when that fails is a form's `payload` field (GitHub's form hooks) read.
  if ("failed" in parsed && parsed.failed === INVALID_JSON && isForm(ctx.inbound.headers)) {
    // Its `payload` field, as GitHub sends it when a hook's content type is the form's default; the
    // field's bytes are JSON text too, so escapes that are not UTF-8 are refused as a raw body's are.
    const inner = formPayload(body);
    if (inner !== undefined) parsed = isUtf8(inner) ? parseJsonObject(inner) : { failed: NOT_UTF8 };
  }
  if ("failed" in parsed) return codingProblem(body, ctx.inbound.headers) ?? parsed.failed;
  return withCtx(ctx, { payload: parsed.payload });
};
