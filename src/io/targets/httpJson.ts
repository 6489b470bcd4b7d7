import { timeoutSignal } from "../../clock.js";
import type { WrittenAs } from "../../config/describe.js";
import { withUrlAsWritten } from "../../config/givenUrl.js";
import { scrub } from "../credentials.js";
import { cutText } from "../cutText.js";
import { htmlPageSummary } from "../htmlPage.js";
import { BLOCKED_PORT, isBlockedPort } from "../outbound/blockedPort.js";
import { ProxyRefusedError } from "../outbound/proxyErrors.js";
import { unreachableHint } from "../outbound/unreachable.js";
import { parseRetryAfter } from "../retryAfter.js";
import { certificateRefusal } from "./certificateRefusal.js";
import { platformFetch } from "./platformFetch.js";
import { credentialsNote } from "./refusedRecipient.js";
import { DeliveryError } from "./target.js";

export interface HttpCall {
  /** Platform name used in error messages (`telegram`). */
  readonly platform: string;
  /** What the call does (`sendMessage`); error messages name this, never the URL (it may carry a token). */
  readonly action: string;
  readonly method: "GET" | "POST" | "PUT";
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly json?: unknown;
  readonly form?: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal | undefined;
  /** Values scrubbed from any text that ends up in an error message. */
  readonly secrets?: readonly (string | undefined)[];
  /** Platform-documented rate limits and temporary refusals beyond 429/5xx/408 and `Retry-After`. */
  readonly throttled?: ThrottleRule | undefined;
  /**
   * What a 2xx answer holds on success: JSON (the default), or JSON or nothing (an API that may answer
   * with an empty body). Any other 2xx body is a failure: an HTML login or proxy page answered, not the
   * platform, and the message was not sent.
   */
  readonly answers?: SuccessBody | undefined;
  /** The config keys holding the credentials, named when the platform refuses them (HTTP 401). */
  readonly credentials?: string | undefined;
  /**
   * What a refusal with this status and parsed body adds to the platform's words, when not the default: the
   * credentials' keys (credentialsNote) on a 401. Telegram's Bot API also answers a malformed token
   * (`bot123:…` pasted with the prefix svc adds) 404 Not Found, in its own JSON.
   */
  readonly refusalNote?: ((status: number, body: unknown) => string) | undefined;
  /**
   * The key `url` was built from (`platforms.slack.base_url`), named when nothing answers at its host and
   * port; absent for a URL the platform's answers gave (a token endpoint), which no key sets.
   */
  readonly baseUrlKey?: string | undefined;
  /**
   * The base `url` was built from and config.yaml's text for it, when a `${VAR}` gave it: every error names
   * that base and its host as the file writes them (`withUrlAsWritten`), never what the variable gave.
   */
  readonly baseUrlGiven?: { readonly base: string; readonly written: WrittenAs } | undefined;
}

export type SuccessBody = "json" | "json or empty";

/**
 * Reads a platform's own throttling signal from a refusal (Graph API `error.code` 130429 in a 400,
 * Feishu's `x-ogw-ratelimit-reset` header): undefined = not throttled, else the seconds to wait, if given.
 */
export type ThrottleRule = (
  status: number,
  body: unknown,
  headers: Headers,
) => { readonly retryAfterSeconds?: number | undefined } | undefined;

export interface HttpAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** Parsed JSON body, or undefined when the body is not JSON. */
  readonly body: unknown;
}

function field(body: unknown, ...path: string[]): unknown {
  let at: unknown = body;
  for (const key of path) {
    if (typeof at !== "object" || at === null) return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}

/**
 * Discord's 400 "Invalid Form Body" (code 50035) says what was wrong only in `errors`, a tree keyed by
 * field path whose leaves are `_errors: [{code, message}]`: the first such leaf, with its path
 * (`content: Must be 2000 or fewer in length.`).
 */
function formFieldError(node: unknown, path: readonly string[] = []): string | undefined {
  if (typeof node !== "object" || node === null || path.length > 8) return undefined;
  const leaf = (node as { _errors?: unknown })._errors;
  if (Array.isArray(leaf)) {
    const message = (leaf[0] as { message?: unknown } | undefined)?.message;
    if (typeof message === "string") return `${path.length === 0 ? "body" : path.join(".")}: ${message}`;
  }
  for (const [key, child] of Object.entries(node)) {
    const found = key === "_errors" ? undefined : formFieldError(child, [...path, key]);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** How much of a platform's error text a message quotes. */
const MAX_DETAIL = 300;

/**
 * Platform text as an error quotes it: credentials cut out first (a cut through an echoed token would
 * leave its beginning, which scrub no longer recognizes), then on one line and at most MAX_DETAIL
 * characters; an HTML page (a CDN's or proxy's 502) by its title and size, since its markup tells the
 * reader nothing.
 */
export function quoted(text: string, secrets: readonly (string | undefined)[]): string {
  const clean = scrub(text, secrets);
  return htmlPageSummary(clean) ?? cutText(clean.replace(/\s+/g, " ").trim(), MAX_DETAIL);
}

/** The platform's own error text, from the usual places platforms put it, without `secrets`. */
export function platformErrorText(
  body: unknown,
  text: string,
  secrets: readonly (string | undefined)[] = [],
): string {
  const fieldError = formFieldError(field(body, "errors"));
  if (fieldError !== undefined) {
    const message = field(body, "message");
    return quoted(`${typeof message === "string" ? `${message} — ` : ""}${fieldError}`, secrets);
  }
  const candidates = [
    field(body, "description"), // telegram
    field(body, "error", "message"), // whatsapp (Graph API)
    field(body, "errmsg"), // wecom, weixin, dingtalk oapi
    field(body, "msg"), // feishu
    field(body, "message"), // discord, mattermost, home assistant, qq, dingtalk v1
    field(body, "error"), // slack, signal-cli-rest-api, matrix (with errcode)
    field(body, "errcode"),
  ];
  for (const candidate of candidates) {
    if (typeof candidate === "string" && candidate.trim() !== "") return quoted(candidate, secrets);
  }
  return text.trim() === "" ? "(empty response)" : quoted(text, secrets);
}

function retryAfterFromBody(body: unknown): number | undefined {
  const value =
    field(body, "parameters", "retry_after") ?? field(body, "retry_after") ?? field(body, "retry_after_ms");
  if (typeof value !== "number" || !Number.isFinite(value)) return undefined;
  return field(body, "retry_after_ms") === value ? value / 1000 : value;
}

function encodeForm(form: Readonly<Record<string, string>>): string {
  return new URLSearchParams(Object.entries(form)).toString();
}

/** Whether a URL carries `user:password@` (config refuses it in base_url; fetch refuses it too, quoting it). */
function hasUserinfo(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.username !== "" || parsed.password !== "";
  } catch {
    return false;
  }
}

/**
 * Sends one HTTP request with a timeout; non-2xx answers and network failures become DeliveryErrors, which
 * name a base url a `${VAR}` gave, and its host, as config.yaml writes it (the system's `ENOTFOUND <host>`
 * and the hints made from it).
 */
export async function httpCall(call: HttpCall): Promise<HttpAnswer> {
  const given = call.baseUrlGiven;
  if (given === undefined) return send(call);
  try {
    return await send(call);
  } catch (err) {
    if (!(err instanceof DeliveryError)) throw err;
    throw new DeliveryError(
      withUrlAsWritten(err.message, given.base, given.written),
      err.transient,
      err.retryAfterSeconds,
      err.answer,
    );
  }
}

async function send(call: HttpCall): Promise<HttpAnswer> {
  const where = `${call.platform}: ${call.action}`;
  if (hasUserinfo(call.url))
    throw new DeliveryError(
      `${where}: base_url holds a user name or password (user:password@) — remove it; the platform's credentials go in its own keys`,
      false,
    );
  const timeout = timeoutSignal(call.timeoutMs);
  const signal = call.signal === undefined ? timeout : AbortSignal.any([call.signal, timeout]);
  const headers: Record<string, string> = { accept: "application/json", ...call.headers };
  let body: string | undefined;
  if (call.json !== undefined) {
    headers["content-type"] = "application/json; charset=utf-8";
    body = JSON.stringify(call.json);
  } else if (call.form !== undefined) {
    headers["content-type"] = "application/x-www-form-urlencoded";
    body = encodeForm(call.form);
  }
  let response: Response;
  let text: string;
  try {
    response = await platformFetch(call.url, {
      method: call.method,
      headers,
      ...(body === undefined ? {} : { body }),
      signal,
      // A followed 301/302 turns a POST into a body-less GET (Fetch standard): the message would be lost
      // while the platform answers the GET, perhaps with 200. A redirect is reported instead.
      redirect: "manual",
    });
    text = await response.text();
  } catch (err) {
    if (call.signal?.aborted) throw new DeliveryError(`${where}: cancelled`, false);
    if (timeout.aborted)
      throw new DeliveryError(`${where}: no answer within ${call.timeoutMs / 1000}s`, true);
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const reason = cause?.code ?? cause?.message ?? (err as Error).message;
    // fetch refuses the Fetch standard's blocked ports before connecting: no retry can change that, so
    // it fails at once and says what to do.
    if (isBlockedPort(err))
      throw new DeliveryError(
        `${where}: not sent — the base_url's port is ${BLOCKED_PORT}: serve the API on another port, or put a proxy in front`,
        false,
      );
    const certificate = certificateRefusal(cause?.code);
    if (certificate !== undefined) throw new DeliveryError(`${where}: ${certificate}`, false);
    // A proxy's refusal (407, a CONNECT answered 403) is a setting no retry changes; an unreachable proxy may
    // come back, as any connection.
    const refused = cause instanceof ProxyRefusedError && cause.status !== undefined;
    // fetch names only the error code; where nothing listened (the port of a local API not started, a host
    // misspelt) and the key to check are said as for a model's base_url or an MCP server's url.
    const unreachable =
      call.baseUrlKey === undefined || cause instanceof ProxyRefusedError
        ? ""
        : unreachableHint(
            cause?.message ?? "",
            call.url,
            call.baseUrlKey,
            `start the server there, or check ${call.baseUrlKey}`,
          );
    throw new DeliveryError(
      `${where}: connection failed (${scrub(String(reason), call.secrets)})${unreachable}`,
      !refused,
    );
  }
  let parsed: unknown;
  try {
    parsed = text === "" ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (response.status >= 200 && response.status < 300) {
    const emptyOk = call.answers === "json or empty" && text.trim() === "";
    if (parsed === undefined && !emptyOk) throw notTheApi(call, response, text);
    return { status: response.status, headers: response.headers, text, body: parsed };
  }
  if (response.status >= 300 && response.status < 400) {
    const location = response.headers.get("location");
    const to = location === null ? "" : ` to ${scrub(redirectTarget(location, call.url), call.secrets)}`;
    throw new DeliveryError(
      `${where}: HTTP ${response.status} — the API redirects${to}; set base_url to the address it redirects to (svc does not follow redirects: they would turn a POST into a GET)`,
      false,
    );
  }
  const detail = platformErrorText(parsed, text, call.secrets);
  const note =
    call.refusalNote?.(response.status, parsed) ??
    (response.status === 401 && call.credentials !== undefined ? credentialsNote(call.credentials) : "");
  const message = `${where}: HTTP ${response.status} — ${detail}${note}`;
  const throttle = call.throttled?.(response.status, parsed, response.headers);
  if (response.status === 429 || throttle !== undefined) {
    // A header saying 0 names no wait (retry.ts): the body's own field may (Telegram's retry_after).
    const header = parseRetryAfter(response.headers.get("retry-after"));
    const retryAfter =
      (header === 0 ? undefined : header) ?? throttle?.retryAfterSeconds ?? retryAfterFromBody(parsed);
    throw new DeliveryError(message, true, retryAfter, parsed);
  }
  const transient = response.status >= 500 || response.status === 408;
  // RFC 9110: a 503 (or any transient refusal) may say when to come back, as a 429 does.
  const retryAfter = transient ? parseRetryAfter(response.headers.get("retry-after")) : undefined;
  throw new DeliveryError(message, transient, retryAfter, parsed);
}

/**
 * A 2xx answer that is not the platform's JSON: a captive portal, a login page or a proxy answered (or
 * base_url names a web server). Counting it as delivered would lose the message without a word.
 */
function notTheApi(call: HttpCall, response: Response, text: string): DeliveryError {
  const type = response.headers.get("content-type")?.split(";")[0]?.trim();
  // Scrubbed before it is cut: a cut through an echoed token would leave its beginning.
  const start = cutText(scrub(text, call.secrets).trim().replace(/\s+/g, " "), 80);
  const body = start === "" ? "an empty body" : `${type ? `${type} ` : ""}"${start}"`;
  return new DeliveryError(
    `${call.platform}: ${call.action}: HTTP ${response.status} with ${body}, where the ${call.platform} API answers JSON — not counted as sent; check base_url (a proxy, captive portal or login page may be answering)`,
    false,
  );
}

/**
 * A refusal reported inside a 2xx body (Slack `ok: false`, Feishu `code != 0`, WeCom `errcode != 0`), its
 * text quoted as a non-2xx answer's is: without credentials, on one line, at most MAX_DETAIL characters.
 */
export function refused(
  platform: string,
  action: string,
  detail: string,
  secrets?: readonly (string | undefined)[],
  /** The platform's parsed answer, for adapters that act on its fields (a stale-token code). */
  answer?: unknown,
): DeliveryError {
  return new DeliveryError(
    `${platform}: ${action}: ${quoted(detail, secrets ?? [])}`,
    false,
    undefined,
    answer,
  );
}

/** Where a redirect points, as scheme, host and port only: its path and query may repeat a token. */
function redirectTarget(location: string, base: string): string {
  try {
    return new URL(location, base).origin;
  } catch {
    return "another address";
  }
}

export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, "")}${path}`;
}
