import { INSECURE_NO_AUTH } from "../config/sections/webhook.js";
import { secretTextForms } from "../io/credentials.js";

const REDACTED = Buffer.from("[redacted]");
/** Secrets shorter than this are not looked for, as `scrub` skips them. */
const MIN_SECRET = 4;
/** Routes' secrets seen; reloads that change them add more, so the cache starts over past this. */
const MAX_CACHED = 1024;
const formsOf = new Map<string, readonly Buffer[]>();

/**
 * A secret's forms as bytes (verbatim, percent- and form-encoded, JSON-escaped), longest first, made once. Not
 * its base64: a sender writes the secret in its payload as a JSON string or a form field, never encoded, and
 * each form is one more search of every accepted body (a 40-hex secret has five base64 forms).
 */
function secretBytes(secret: string): readonly Buffer[] {
  let forms = formsOf.get(secret);
  if (forms === undefined) {
    if (formsOf.size >= MAX_CACHED) formsOf.clear();
    forms = secretTextForms(secret).map((form) => Buffer.from(form));
    formsOf.set(secret, forms);
  }
  return forms;
}

function replaced(body: Buffer, form: Buffer): Buffer {
  const parts: Buffer[] = [];
  let from = 0;
  for (let at = body.indexOf(form); at >= 0; at = body.indexOf(form, from)) {
    parts.push(body.subarray(from, at), REDACTED);
    from = at + form.length;
  }
  parts.push(body.subarray(from));
  return Buffer.concat(parts);
}

/**
 * `body` with the route's `secret` in every form it may be written in replaced by `[redacted]`, for the
 * delivery history: Gogs and Gitea before 1.14 send the hook's secret inside the payload (`"secret": "..."`)
 * as well as signing with it. The same Buffer, not copied, when the body holds none (the common case).
 */
export function withoutSecret(body: Buffer, secret: string | undefined): Buffer {
  if (secret === undefined || secret.length < MIN_SECRET || secret === INSECURE_NO_AUTH) return body;
  let out = body;
  for (const form of secretBytes(secret)) if (out.indexOf(form) >= 0) out = replaced(out, form);
  return out;
}
