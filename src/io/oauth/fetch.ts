import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { timeoutSignal } from "../../clock.js";
import { authorizationSecrets, scrub } from "../credentials.js";
import { outboundFetch } from "../outbound/dispatcher.js";
import { USER_AGENT } from "../version.js";
import { readDeviceAnswer } from "./deviceAnswer.js";

/** A failed response seen by an OAuth fetch: kept so errors can report status and an excerpt. */
export interface FailedFetch {
  readonly url: string;
  readonly method: string;
  readonly status: number;
  readonly body: string;
  /** What is missing or wrong in a 200 answer svc cannot use (a device authorization answer's). */
  readonly problem?: string;
}

export interface OAuthFetches {
  /** Discovery, registration, device authorization: always `Svc-Agent/<version>`. */
  readonly discovery: FetchLike;
  /** Token endpoint (exchange, refresh, device polling): `oauth.user_agent` when set. */
  readonly token: FetchLike;
  /**
   * Device authorization endpoint: `Svc-Agent/<version>`, OAuth errors answered 200 read as errors, the
   * answer read as RFC 8628 names its fields (`readDeviceAnswer`); one svc cannot use is recorded and thrown.
   */
  readonly deviceAuthorization: FetchLike;
  /**
   * Every response with status >= 400 (and network failures as status 0), in order, its body with the
   * request's own credentials and the `held` ones `[redacted]`.
   */
  readonly failures: FailedFetch[];
  /** `text` with the `held` credentials `[redacted]` (an error's message that is no recorded answer). */
  readonly redacted: (text: string) => string;
}

/**
 * The credentials svc holds for the server whether a request carries them or not (its saved tokens, its
 * client's secret): an answer may quote any of them (a refresh refused naming the access token it was to
 * replace). Read when a failure is recorded.
 */
export type HeldCredentials = () => readonly (string | undefined)[];

/**
 * An OAuth error answered with status 200 (GitHub's token endpoint: `authorization_pending`,
 * `slow_down`, `bad_verification_code`, ...) as the 400 RFC 6749 section 5.2 prescribes, so the
 * libraries read it as the error it is instead of failing on a token response without a token.
 */
async function errorAnswered200(res: Response): Promise<{ body: string; response: Response } | undefined> {
  if (res.status !== 200 || !/json/i.test(res.headers.get("content-type") ?? "")) return undefined;
  const body = await res.clone().text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  const fields = parsed as { error?: unknown; access_token?: unknown } | null;
  if (typeof fields?.error !== "string" || fields.access_token !== undefined) return undefined;
  return { body, response: await answeredAs(res, body, 400, "Bad Request") };
}

/**
 * `res` with `body` in place of its own (already read through a clone, so its stream is let go), and
 * `status` when given: its headers kept but for the length and coding, which were its own body's.
 */
async function answeredAs(res: Response, body: string, status = res.status, statusText = res.statusText) {
  await res.body?.cancel().catch(() => undefined);
  const headers = new Headers(res.headers);
  headers.delete("content-length");
  headers.delete("content-encoding");
  headers.set("content-type", "application/json");
  return new Response(body, { status, statusText, headers });
}

/**
 * A token endpoint answer written form-encoded (`application/x-www-form-urlencoded`: GitHub answers so a
 * request that does not ask for JSON, and some servers whatever the request asks), tokens or an error,
 * as the JSON object RFC 6749 section 5 prescribes, so the libraries read it (its values stay strings:
 * `expires_in=3600` is read as a number by both).
 */
async function formAnswerAsJson(res: Response): Promise<Response | undefined> {
  if (!/^\s*application\/x-www-form-urlencoded/i.test(res.headers.get("content-type") ?? ""))
    return undefined;
  const fields = Object.fromEntries(new URLSearchParams(await res.clone().text()));
  if (typeof fields.access_token !== "string" && typeof fields.error !== "string") return undefined;
  return answeredAs(res, JSON.stringify(fields));
}

/**
 * An answer's fields written `null` (and a token response's `expires_in` written `""`) as the absent
 * fields they stand for: RFC 6749 section 5.1 and RFC 8628 section 3.2 leave out a parameter without a
 * value, but servers that serialize every field of their model answer `"refresh_token": null`,
 * `"scope": null` or `"verification_uri_complete": null`, which the libraries refuse as no string (and
 * the SDK would read a null lifetime as 0: a token to refresh at every request).
 */
async function withoutEmptyFields(res: Response, endpoint: "oauth" | "token"): Promise<Response | undefined> {
  if (res.status !== 200 || !/json/i.test(res.headers.get("content-type") ?? "")) return undefined;
  const fields = (await res.clone().json()) as Record<string, unknown> | null;
  if (typeof fields !== "object" || fields === null || Array.isArray(fields)) return undefined;
  const empty = (key: string, value: unknown) =>
    value === null || (endpoint === "token" && key === "expires_in" && value === "");
  if (!Object.entries(fields).some(([key, value]) => empty(key, value))) return undefined;
  return answeredAs(
    res,
    JSON.stringify(Object.fromEntries(Object.entries(fields).filter(([key, value]) => !empty(key, value)))),
  );
}

/** Request fields that carry a credential: an answer quoting one back must not show it. */
const SENT_SECRETS = new Set([
  "client_secret",
  "client_assertion",
  "assertion",
  "code",
  "code_verifier",
  "device_code",
  "refresh_token",
  "access_token",
  "token",
  "password",
]);

/**
 * The credentials a request carried (form fields above, Basic or Bearer authorization), so that an error
 * body quoting them in free text ("client secret x is wrong") is recorded without them.
 */
function sentSecrets(init: RequestInit | undefined, headers: Headers): string[] {
  const secrets: string[] = [];
  const body = init?.body;
  const form =
    body instanceof URLSearchParams ? body : typeof body === "string" ? new URLSearchParams(body) : undefined;
  for (const [key, value] of form ?? []) if (SENT_SECRETS.has(key)) secrets.push(value);
  secrets.push(...authorizationSecrets(headers.get("authorization") ?? ""));
  return secrets;
}

/** How much of a failed answer's body is kept for its error. */
const BODY_KEPT_CHARS = 2000;

/** A server that accepts the connection and never answers must not hang a login or hold the token lock. */
export const OAUTH_REQUEST_TIMEOUT_MS = 30_000;

/** The string fields a 200 answer of the token endpoint carries (RFC 6749 section 5.1). */
const TOKEN_FIELDS = ["access_token", "token_type"] as const;

/** A 200 that is no token response (a login page, a proxy's): its body, for the error. */
async function notAnAnswer(res: Response): Promise<string | undefined> {
  if (res.status !== 200) return undefined;
  const body = await res.clone().text();
  try {
    const parsed = JSON.parse(body) as Record<string, unknown> | null;
    // A lifetime that is no number (`"expires_in": "soon"`) leaves the token's expiry unknown.
    const lifetime = parsed?.expires_in;
    const readable = lifetime === undefined || Number.isFinite(Number(lifetime));
    if (readable && TOKEN_FIELDS.every((f) => typeof parsed?.[f] === "string")) return undefined;
  } catch {
    // not JSON: reported below
  }
  return body === "" ? "(empty body: no token response)" : body;
}

/**
 * A 200 of the device authorization endpoint read as RFC 8628 names its fields (`readDeviceAnswer`), or the
 * answer as it is with what makes it unusable.
 */
async function deviceAnswer(
  res: Response,
  url: string,
): Promise<{ response: Response } | { body: string; problem: string }> {
  if (res.status !== 200) return { response: res };
  const body = await res.clone().text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return body === ""
      ? { body: "(empty body: no device authorization response)", problem: "not JSON" }
      : { body, problem: "not JSON" };
  }
  const reading = readDeviceAnswer(parsed, url);
  if ("problem" in reading) return { body, problem: reading.problem };
  return { response: await answeredAs(res, JSON.stringify(reading.fields)) };
}

function withUserAgent(
  base: FetchLike,
  userAgent: string,
  failures: FailedFetch[],
  timeoutMs: number,
  held: HeldCredentials,
  endpoint: "other" | "oauth" | "token" = "other",
): FetchLike {
  return async (url, init) => {
    const headers = new Headers(init?.headers);
    headers.set("user-agent", userAgent);
    // What a recorded answer may not show: what the request carried, and what svc holds besides.
    const secrets = () => [...sentSecrets(init, headers), ...held()];
    const method = init?.method ?? "GET";
    // A body as recorded: those credentials redacted before it is cut at 2,000 characters (a cut through one
    // would keep its start, which a redaction afterwards no longer recognizes).
    const kept = (body: string) => scrub(body, secrets()).slice(0, BODY_KEPT_CHARS);
    const timeout = timeoutSignal(timeoutMs);
    const signal = init?.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    let res: Response;
    try {
      // The body is read here, under the same timeout: a server that sends its headers and then stalls
      // is reported as one that never answers, naming the URL, not by a reader's bare abort later.
      res = await wholeBody(await base(url, { ...init, headers, signal }));
    } catch (err) {
      // "fetch failed" alone hides the reason (TLS verification, refused connection): add the cause.
      const cause = (err as Error).cause;
      const why = cause instanceof Error && cause.message !== "" ? `: ${cause.message}` : "";
      const what = timeout.aborted
        ? `timed out after ${Math.round(timeoutMs / 100) / 10} s`
        : `${(err as Error).message}${why}`;
      failures.push({ url: String(url), method, status: 0, body: scrub(what, secrets()) });
      throw err;
    }
    if (endpoint !== "other") {
      res = (await formAnswerAsJson(res).catch(() => undefined)) ?? res;
      res = (await withoutEmptyFields(res, endpoint).catch(() => undefined)) ?? res;
      const rewritten = await errorAnswered200(res).catch(() => undefined);
      if (rewritten !== undefined) {
        failures.push({
          url: String(url),
          method,
          status: 200,
          body: kept(rewritten.body),
        });
        return rewritten.response;
      }
    }
    if (endpoint === "oauth") {
      // Recorded so the error names the endpoint, the status, an excerpt and what is wrong, in svc's words
      // rather than the library's.
      const read = await deviceAnswer(res, String(url));
      if ("problem" in read) {
        failures.push({
          url: String(url),
          method,
          status: 200,
          body: kept(read.body),
          problem: read.problem,
        });
        throw new Error(`unusable device authorization response: ${read.problem}`);
      }
      res = read.response;
    } else if (endpoint === "token") {
      // Recorded so the error names the endpoint, the status and an excerpt instead of a parser's message.
      const body = await notAnAnswer(res).catch(() => undefined);
      if (body !== undefined)
        failures.push({
          url: String(url),
          method,
          status: 200,
          body: kept(body),
        });
    }
    if (res.status >= 400) {
      let body = "";
      try {
        body = await res.clone().text();
      } catch {
        // body unreadable: status alone is reported
      }
      failures.push({
        url: String(url),
        method,
        status: res.status,
        body: kept(body),
      });
    }
    return res;
  };
}

/** Statuses whose response cannot carry a body (the Fetch standard's null body statuses). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * `res` with its body read into memory (OAuth answers are small documents). An event stream is left as
 * it is: the MCP server's answer to discovery's unauthenticated `GET` may open one that never ends, and
 * discovery reads only its status and headers.
 */
async function wholeBody(res: Response): Promise<Response> {
  if (/^\s*text\/event-stream/i.test(res.headers.get("content-type") ?? "")) return res;
  const body = await res.arrayBuffer();
  return new Response(NULL_BODY_STATUSES.has(res.status) ? null : body, {
    status: res.status,
    statusText: res.statusText,
    headers: res.headers,
  });
}

/**
 * The fetch functions every OAuth request goes through. MCP traffic never uses them,
 * so `oauth.user_agent` cannot leak onto it.
 */
export function oauthFetches(
  userAgentOverride?: string | null,
  base: FetchLike = outboundFetch,
  timeoutMs = OAUTH_REQUEST_TIMEOUT_MS,
  held: HeldCredentials = () => [],
): OAuthFetches {
  const failures: FailedFetch[] = [];
  const custom =
    typeof userAgentOverride === "string" && userAgentOverride.trim() !== "" ? userAgentOverride : USER_AGENT;
  return {
    discovery: withUserAgent(base, USER_AGENT, failures, timeoutMs, held),
    token: withUserAgent(base, custom, failures, timeoutMs, held, "token"),
    deviceAuthorization: withUserAgent(base, USER_AGENT, failures, timeoutMs, held, "oauth"),
    failures,
    redacted: (text) => scrub(text, held()),
  };
}
