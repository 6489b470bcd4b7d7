import { INSECURE_NO_AUTH } from "../config/sections/webhook.js";
import { secretTextForms } from "../io/credentials.js";
import {
  collect,
  composed,
  cutsEscape,
  type DecodedView,
  jsonLayers,
  percentSearch,
  percentView,
  type Spans,
  spansReplaced,
} from "../io/decodedView.js";

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

/**
 * `body` with each `form` found replaced; a percent-encoded one (`percentEncoded`) only where it cuts no `%XX`
 * escape of the body (`Fdead%26beef1` in `%2Fdead%26beef1` is not there): the body is kept whole.
 */
function replaced(body: Buffer, form: Buffer, percentEncoded: boolean): Buffer {
  const parts: Buffer[] = [];
  const text = percentEncoded ? body.toString("latin1") : "";
  let from = 0;
  for (let at = body.indexOf(form); at >= 0; ) {
    if (percentEncoded && cutsEscape(text, at, at + form.length)) {
      at = body.indexOf(form, at + 1);
      continue;
    }
    parts.push(body.subarray(from, at), REDACTED);
    from = at + form.length;
    at = body.indexOf(form, from);
  }
  if (from === 0) return body;
  parts.push(body.subarray(from));
  return Buffer.concat(parts);
}

const BACKSLASH = 0x5c;
const PERCENT = 0x25;
const PLUS = 0x2b;
const percentChecks = new Map<
  string,
  { wanted: (codePoint: number) => boolean; holds: (text: string) => boolean }
>();

/**
 * What of a secret's `%XX` escapes `percentView` reads (its characters, and `\` for a JSON escape written
 * percent-encoded), and a check for one in a text (`percentSearch`), made once.
 */
function percentCheck(secret: string) {
  let check = percentChecks.get(secret);
  if (check === undefined) {
    if (percentChecks.size >= MAX_CACHED) percentChecks.clear();
    const held = new Set([...secret].map((c) => c.codePointAt(0) as number));
    held.add(BACKSLASH);
    const wanted = (codePoint: number) => held.has(codePoint);
    check = { wanted, holds: percentSearch(wanted, /[\u0080-\uffff]/.test(secret)) };
    percentChecks.set(secret, check);
  }
  return check;
}

/**
 * `body` with the secret hidden where it is percent-encoded otherwise than `secretTextForms` writes it: Gogs
 * sends a form's `payload=` as Go's `url.QueryEscape` of Go's JSON, which keeps `~`, writes `*` as `%2A`,
 * `&` (JSON's `\u0026`) as `%5Cu0026` and a space as `+`. The body (its bytes one unit each) is read with its
 * `%XX` decoded (`percentView`), and that reading with its JSON escapes (`jsonLayers`), each searched for the
 * secret, found where the body writes it, its escapes whole. Only a body with an escape of the secret's
 * characters or of `\` is read so; and, for a secret holding a space, a body with a `+` is also read with each
 * `+` a space (`ab+cd~ef12` for `ab cd~ef12`). The same Buffer when none is found.
 */
function withoutPercentEncoded(body: Buffer, secret: string): Buffer {
  const spaced = body.indexOf(PLUS) >= 0 && secret.includes(" ");
  if (!spaced && body.indexOf(PERCENT) < 0) return body;
  const { wanted, holds } = percentCheck(secret);
  const text = body.toString("latin1");
  const escaped = holds(text);
  if (!escaped && !spaced) return body;
  const spans: Spans = [];
  const search = (percent: DecodedView) => {
    collect(percent, [secret], 0, spans);
    for (const units of jsonLayers(percent.text)) collect(composed(percent, units), [secret], 0, spans);
  };
  if (escaped) search(percentView(text, wanted));
  if (spaced) search(percentView(text, wanted, true));
  return spans.length === 0 ? body : Buffer.from(spansReplaced(text, spans, "[redacted]"), "latin1");
}

/**
 * `body` with the route's `secret` in every form it may be written in replaced by `[redacted]`, for the
 * delivery history: Gogs and Gitea before 1.14 send the hook's secret inside the payload (`"secret": "..."`)
 * as well as signing with it. Its forms (`secretBytes`) are searched as they are, then the body read with its
 * `%XX` decoded and JSON escapes read (`withoutPercentEncoded`). The same Buffer, not copied, when the body
 * holds none (the common case).
 */
export function withoutSecret(body: Buffer, secret: string | undefined): Buffer {
  if (secret === undefined || secret.length < MIN_SECRET || secret === INSECURE_NO_AUTH) return body;
  let out = body;
  for (const form of secretBytes(secret))
    if (out.indexOf(form) >= 0)
      out = replaced(out, form, form.indexOf(PERCENT) >= 0 && form.toString() !== secret);
  return withoutPercentEncoded(out, secret);
}
