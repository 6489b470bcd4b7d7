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
  secondOfEscapedPair,
  spansReplaced,
} from "../io/decodedView.js";

/** Secrets shorter than this are not looked for, as `scrub` skips them. */
const MIN_SECRET = 4;
/** Routes' secrets seen; reloads that change them add more, so the cache starts over past this. */
const MAX_CACHED = 1024;
const BACKSLASH = 0x5c;
const PERCENT = 0x25;
const PLUS = 0x2b;
const formsOf = new Map<string, readonly SecretForm[]>();

/** One of a secret's forms as bytes, with what `formSpans` checks where it is found (see there). */
interface SecretForm {
  readonly bytes: Buffer;
  /** Percent-encoded otherwise than the secret is written. */
  readonly percentEncoded: boolean;
  /** Beginning with a JSON escape's `\` the secret does not begin with. */
  readonly escapeBegun: boolean;
}

/**
 * A secret's forms as bytes (verbatim, percent- and form-encoded, JSON-escaped), longest first, made once,
 * with what each is (not read from its bytes again for every body). Not its base64: a sender writes the
 * secret in its payload as a JSON string or a form field, never encoded, and each form is one more search
 * of every accepted body (a 40-hex secret has five base64 forms).
 */
function secretForms(secret: string): readonly SecretForm[] {
  let forms = formsOf.get(secret);
  if (forms === undefined) {
    if (formsOf.size >= MAX_CACHED) formsOf.clear();
    forms = secretTextForms(secret).map((text) => {
      const bytes = Buffer.from(text);
      const verbatim = bytes.toString() === secret;
      return {
        bytes,
        percentEncoded: bytes.indexOf(PERCENT) >= 0 && !verbatim,
        escapeBegun: bytes[0] === BACKSLASH && !verbatim,
      };
    });
    formsOf.set(secret, forms);
  }
  return forms;
}

/**
 * Where `body` holds `form`, as spans of it (`text`, the body as text, read only for a percent-encoded one or one
 * beginning with an escape's `\`); a percent-encoded one (`percentEncoded`) only where it cuts no `%XX` escape of
 * the body (`Fdead%26beef1` in `%2Fdead%26beef1` is not there): the body is kept whole. One beginning with a JSON
 * escape's `\` (`escapeBegun`: `\/abcd` for `/abcd`) is not there where that `\` is the second of an escaped pair
 * (`C:\\/abcd`, `secondOfEscapedPair`): the shorter form after it is hidden alone, the pair whole.
 */
function formSpans(
  body: Buffer,
  text: () => string,
  form: Buffer,
  percentEncoded: boolean,
  escapeBegun: boolean,
  spans: Spans,
): void {
  for (let at = body.indexOf(form); at >= 0; ) {
    if (
      (percentEncoded && cutsEscape(text(), at, at + form.length)) ||
      (escapeBegun && secondOfEscapedPair(text(), at))
    ) {
      at = body.indexOf(form, at + 1);
      continue;
    }
    spans.push([at, at + form.length]);
    at = body.indexOf(form, at + form.length);
  }
}

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
 * The spans of `body` (`text`, its bytes one unit each, read only when needed) that write the secret percent-encoded otherwise than
 * `secretTextForms` writes it: Gogs sends a form's `payload=` as Go's `url.QueryEscape` of Go's JSON, which keeps
 * `~`, writes `*` as `%2A`, `&` (JSON's `\u0026`) as `%5Cu0026` and a space as `+`. The body is read with its
 * `%XX` decoded (`percentView`), and that reading with its JSON escapes (`jsonLayers`), each searched for the
 * secret, found where the body writes it, its escapes whole (`abcd%2Fef12%5C%5C` for `abcd/ef12\`, JSON's
 * `\\` of it with it). Only a body with an escape of the secret's characters or of `\` is read so; and, for a
 * secret holding a space, a body with a `+` is also read with each `+` a space (`ab+cd~ef12` for `ab cd~ef12`).
 */
function percentEncodedSpans(body: Buffer, text: () => string, secret: string, spans: Spans): void {
  // The secret first: a body is searched for a `+` only for a secret holding a space.
  const spaced = secret.includes(" ") && body.indexOf(PLUS) >= 0;
  if (!spaced && body.indexOf(PERCENT) < 0) return;
  const { wanted, holds } = percentCheck(secret);
  const escaped = holds(text());
  if (!escaped && !spaced) return;
  const search = (percent: DecodedView) => {
    collect(percent, [secret], 0, spans);
    for (const units of jsonLayers(percent.text)) collect(composed(percent, units), [secret], 0, spans);
  };
  if (escaped) search(percentView(text(), wanted));
  if (spaced) search(percentView(text(), wanted, true));
}

/**
 * `body` with the route's `secret` in every form it may be written in replaced by `[redacted]`, for the
 * delivery history: Gogs and Gitea before 1.14 send the hook's secret inside the payload (`"secret": "..."`)
 * as well as signing with it. Its forms (`secretForms`) as they are, and the body read with its `%XX` decoded
 * and JSON escapes read (`percentEncodedSpans`), are all found in the body as sent and hidden at once, a span
 * inside a wider one hidden with it: the percent-encoded form of a secret ending in `\` (`abcd%2Fef12%5C`) is
 * inside its JSON escape's (`abcd%2Fef12%5C%5C`), whose `%5C` it would otherwise leave behind, and the JSON in the
 * payload broken. The same Buffer, not copied, when the body holds none (the common case).
 */
export function withoutSecret(body: Buffer, secret: string | undefined): Buffer {
  if (secret === undefined || secret.length < MIN_SECRET || secret === INSECURE_NO_AUTH) return body;
  // The body as text (its bytes one unit each) only once some search needs it: most bodies hold no form.
  let latin1: string | undefined;
  const text = () => {
    latin1 ??= body.toString("latin1");
    return latin1;
  };
  const spans: Spans = [];
  for (const form of secretForms(secret))
    formSpans(body, text, form.bytes, form.percentEncoded, form.escapeBegun, spans);
  percentEncodedSpans(body, text, secret, spans);
  return spans.length === 0 ? body : Buffer.from(spansReplaced(text(), spans, "[redacted]"), "latin1");
}
