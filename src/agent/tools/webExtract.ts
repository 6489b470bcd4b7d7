import type { WebSettings } from "../../config/sections/tools.js";
import { wholeUtf8Length } from "../../io/utf8Cut.js";
import { guardedFetch, type Resolver } from "../../io/web/guardedFetch.js";
import { argsObject, capped, stringArg, textOutcome, toolError } from "./outcome.js";
import type { AgentTool } from "./tool.js";
import { decodeText } from "./web/decodeText.js";
import { collapseWhitespace, htmlToText } from "./web/htmlText.js";

export interface WebDeps {
  /** DNS resolution (tests resolve names to chosen addresses); default: the system resolver. */
  readonly resolve?: Resolver;
  /** Which addresses count as public (tests); default: `isPublicAddress`. */
  readonly isPublic?: (address: string) => boolean;
}

/**
 * Content types read as text: `text/*`, JSON, XML and YAML (also as a `+json` / `+xml` / `+yaml` suffix), and
 * the text formats served as `application/` (a spec, a script, a query) that a page fetched for its text may be.
 */
const TEXT_TYPES =
  /^(text\/|application\/((x-)?(json|xml|yaml|ndjson|toml|javascript|ecmascript|sh|shellscript|sql|graphql)|[a-z0-9.+-]*\+(json|xml|yaml))\b)/;

const CHARSET = /charset\s*=\s*["']?([A-Za-z0-9_.:-]+)/i;

/**
 * An untyped response that is not text, sniffed as browsers do (WHATWG MIME Sniffing): a PDF signature,
 * or a binary data byte (a control character no text holds) in its first 1445 bytes, a byte order mark
 * aside (UTF-16 text is full of NULs).
 */
export function untypedBinary(body: Buffer): boolean {
  if (bomCharset(body) !== undefined) return false;
  if (body.subarray(0, 5).toString("latin1") === "%PDF-") return true;
  const head = body.subarray(0, 1445);
  for (const byte of head) {
    if (byte <= 0x08 || byte === 0x0b || (byte >= 0x0e && byte <= 0x1a) || (byte >= 0x1c && byte <= 0x1f))
      return true;
  }
  return false;
}

/** The encoding a byte order mark at the start of `body` names, if there is one. */
function bomCharset(body: Buffer): string | undefined {
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return "utf-8";
  if (body[0] === 0xfe && body[1] === 0xff) return "utf-16be";
  if (body[0] === 0xff && body[1] === 0xfe) return "utf-16le";
  return undefined;
}

/**
 * The page's character encoding: a byte order mark, else the Content-Type's charset, else (HTML) a
 * `<meta charset>` or `<meta http-equiv="Content-Type" content="...; charset=...">` in the first 1024
 * bytes, as browsers look for it; else UTF-8.
 */
export function charsetOf(contentType: string, body: Buffer, isHtml: boolean): string {
  const bom = bomCharset(body);
  if (bom !== undefined) return bom;
  const declared = CHARSET.exec(contentType)?.[1];
  if (declared !== undefined || !isHtml) return declared ?? "utf-8";
  const head = body.subarray(0, 1024).toString("latin1");
  for (const meta of head.match(/<meta\b[^>]*>/gi) ?? []) {
    const charset = CHARSET.exec(meta)?.[1];
    // A page that could read its own <meta> as ASCII is not UTF-16, whatever it says: browsers then use
    // UTF-8 (HTML's prescan rule), where TextDecoder would turn every two bytes into one CJK character.
    if (charset !== undefined)
      return /^(utf-16(be|le)?|unicode(fffe)?|ucs-2|csunicode)$/i.test(charset) ? "utf-8" : charset;
  }
  return "utf-8";
}

/** Characters of a page's `<title>` shown (a real one is far shorter). */
export const TITLE_MAX_CHARS = 300;

/**
 * The title as shown: at most `TITLE_MAX_CHARS` (and never more than `max_chars`), cut with "…" — a
 * hostile `<title>` of megabytes would otherwise reach the model whole, past `tools.web.max_chars`.
 */
export function titleLine(title: string, maxChars: number): string {
  const max = Math.min(TITLE_MAX_CHARS, maxChars);
  if (title.length <= max) return title;
  const code = title.charCodeAt(max - 1);
  return `${title.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max)}…`;
}

/**
 * Said in place of a page's text when it has none, so the model does not take a blank for a failed fetch;
 * an HTML page with no text is most often one a script builds in the browser.
 */
function nothingRead(body: Buffer, isHtml: boolean): string {
  if (body.length === 0) return "(the page is empty)";
  if (isHtml)
    return "(the page has no readable text: its content may be built by JavaScript in the browser, which web_extract does not run)";
  return `(the page holds only whitespace: ${body.length} bytes)`;
}

/** `web_extract`: the readable text of a web page (docs/agent-tools.md). */
export function webExtractTool(settings: WebSettings, deps: WebDeps = {}): AgentTool {
  return {
    name: "web_extract",
    description:
      "Fetch a web page (http or https URL) and return its readable text: title and body text, without " +
      `markup, scripts or styles. Long pages are cut at ${settings.max_chars} characters.`,
    inputSchema: {
      type: "object",
      properties: { url: { type: "string", description: "The http(s) URL of the page" } },
      required: ["url"],
      additionalProperties: false,
    },
    async execute(args, context) {
      const object = argsObject(args);
      if (typeof object === "string") return toolError(object);
      const url = stringArg(object, "url");
      if (typeof url !== "string") return toolError(url.error);
      const fetched = await guardedFetch(url, {
        allowPrivate: settings.allow_private,
        maxBytes: settings.max_bytes,
        timeoutMs: settings.timeout_seconds * 1000,
        signal: context.signal,
        accept: "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5",
        ...(deps.resolve === undefined ? {} : { resolve: deps.resolve }),
        ...(deps.isPublic === undefined ? {} : { isPublic: deps.isPublic }),
      });
      if (!fetched.ok) return toolError(fetched.error);
      if (fetched.status >= 400) return toolError(`HTTP ${fetched.status} from ${fetched.url}`);
      const type = fetched.contentType.toLowerCase();
      const isHtml = type === "" || type.includes("html");
      if (!isHtml && !TEXT_TYPES.test(type)) {
        return toolError(`not a text page: ${fetched.url} is ${type.split(";")[0]}`);
      }
      if (type === "" && untypedBinary(fetched.body)) {
        return toolError(`not a text page: ${fetched.url} is binary data (it names no Content-Type)`);
      }
      const charset = charsetOf(type, fetched.body, isHtml);
      // A page cut at max_bytes ends on a whole character, not on a U+FFFD for the half read.
      const cut = fetched.truncated && /^utf-?8$/i.test(charset);
      const raw = decodeText(
        cut ? fetched.body.subarray(0, wholeUtf8Length(fetched.body)) : fetched.body,
        charset,
      );
      const page = isHtml ? htmlToText(raw) : { title: "", text: collapseWhitespace(raw) };
      const title = titleLine(page.title, settings.max_chars);
      const header = [`URL: ${fetched.url}`, ...(title ? [`Title: ${title}`] : [])].join("\n");
      const note = fetched.truncated ? `\n[page cut at ${settings.max_bytes} bytes]` : "";
      const text = page.text.trim() === "" ? nothingRead(fetched.body, isHtml) : page.text;
      return textOutcome(`${header}\n\n${capped(text, settings.max_chars)}${note}`);
    },
  };
}
