import type { SseError } from "@modelcontextprotocol/sdk/client/sse.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { describeWithCauses, SvcError } from "../../errors.js";
import { scrub } from "../credentials.js";
import { htmlPageSummary } from "../htmlPage.js";
import { isSseError, isStreamableHttpError } from "./clientErrors.js";

/** The HTTP status a transport error carries (Streamable HTTP or SSE). */
export function httpStatusOf(err: unknown): number | undefined {
  if (!(isStreamableHttpError(err) || isSseError(err))) return undefined;
  const code = err.code;
  return typeof code === "number" && code >= 100 ? code : undefined;
}

interface Issue {
  readonly code?: string;
  readonly path?: ReadonlyArray<PropertyKey>;
  readonly message?: string;
  readonly errors?: ReadonlyArray<ReadonlyArray<Issue>>;
  /** The values an `invalid_value` issue allows. */
  readonly values?: ReadonlyArray<unknown>;
}

/** The issues of a zod validation error (the SDK checks each message and result it receives with zod). */
function zodIssues(err: unknown): readonly Issue[] | undefined {
  // `ZodError` of zod, `$ZodError` of zod/mini (the SDK checks results with the latter).
  if (typeof err !== "object" || err === null) return undefined;
  const { name, issues } = err as { name?: unknown; issues?: unknown };
  if (name !== "ZodError" && name !== "$ZodError") return undefined;
  return Array.isArray(issues) ? (issues as Issue[]) : undefined;
}

/**
 * A union of objects told apart by one field (MCP's content blocks by `type`) whose every alternative refused
 * the value of that field: the value is none of them, so say all the values, not the first alternative's.
 */
function discriminatorIssue(
  branches: ReadonlyArray<ReadonlyArray<Issue>>,
  path: PropertyKey[],
): Issue | undefined {
  const refused = branches.map((branch) =>
    branch.find((i) => i.code === "invalid_value" && i.path?.length === 1),
  );
  const key = refused[0]?.path?.[0];
  if (key === undefined || refused.some((i) => i === undefined || i.path?.[0] !== key)) return undefined;
  const values = [...new Set(refused.flatMap((i) => i?.values ?? []).map((v) => JSON.stringify(v)))];
  return { code: "invalid_value", path: [...path, key], message: `expected one of ${values.join(", ")}` };
}

/** The innermost issues, each with its full path; of a union, the alternative with the fewest problems. */
function leafIssues(issues: readonly Issue[], prefix: readonly PropertyKey[] = []): Issue[] {
  return issues.flatMap((issue) => {
    const path = [...prefix, ...(issue.path ?? [])];
    if (issue.code === "invalid_union" && issue.errors !== undefined && issue.errors.length > 0) {
      const discriminator = discriminatorIssue(issue.errors, path);
      if (discriminator !== undefined) return [discriminator];
      const branches = issue.errors.map((branch) => leafIssues(branch, path));
      return branches.reduce((best, branch) => (branch.length < best.length ? branch : best));
    }
    return [{ ...issue, path }];
  });
}

/** `tools: expected array, received string (and 2 more problems)`: one line instead of the issues' JSON. */
function summarizeIssues(issues: readonly Issue[]): string {
  const leaves = leafIssues(issues);
  const first = leaves[0];
  if (first === undefined) return "it does not have the expected shape";
  const where =
    first.path === undefined || first.path.length === 0 ? "" : `${first.path.map(String).join(".")}: `;
  const what = (first.message ?? "invalid").replace(/^Invalid input: /, "");
  const more = leaves.length - 1;
  return `${where}${what}${more > 0 ? ` (and ${more} more problem${more === 1 ? "" : "s"})` : ""}`;
}

/** A failed zod validation as one line (`params.maxTokens: expected number, received undefined`), else undefined. */
export function summarizeZodError(err: unknown): string | undefined {
  const issues = zodIssues(err);
  return issues === undefined ? undefined : summarizeIssues(issues);
}

/**
 * A message or result that failed the SDK's validation, as one line: what was expected and what came;
 * undefined for any other error. An answer that is not a JSON-RPC message at all (a url answering some
 * other JSON) says so and where to look.
 */
export function describeMalformed(err: unknown, what = "the server's answer"): string | undefined {
  const issues = zodIssues(err);
  if (issues === undefined) return undefined;
  const notJsonRpc = issues.some(
    (issue) =>
      issue.code === "invalid_union" &&
      issue.errors?.some((branch) => branch.some((i) => i.path?.[0] === "jsonrpc")),
  );
  if (notJsonRpc)
    return `${what} is not a JSON-RPC message (no "jsonrpc": "2.0") — check that the url is the server's MCP endpoint`;
  return `${what} is malformed: ${summarizeIssues(issues)}`;
}

/** The longest error message summarizedIssueDump reads for zod's issues: 256 KiB. */
const DUMP_CAP = 256 * 1024;

/**
 * A server's error answer quoting zod's issues as JSON, as an MCP SDK server refuses a result of its own
 * tool (`Invalid tools/call result: [ { "code": "invalid_union", … ` over some 150 lines) or a request
 * (`Invalid tools/call request: …`): the issues as one line, as describeMalformed gives them; a tool's
 * result so refused says that the tool ran. Undefined for any other text.
 */
export function summarizedIssueDump(text: string): string | undefined {
  // Any server's error message reaches here, a tool's included (on the gateway's main thread): the search
  // must cost in proportion to the text. A cheap look for the marker first; what was invalid is one to
  // three words ("tools/call", "task creation"), never any run of words, which let a message of "Invalid x "
  // repeated take seconds to minutes; and a message past DUMP_CAP (a dump is kilobytes) is not read for one.
  if (text.length > DUMP_CAP) return undefined;
  if (!text.includes(" result: [") && !text.includes(" request: [")) return undefined;
  const found = /\bInvalid ([\w/]{1,64}(?: (?!Invalid )[\w/]{1,64}){0,2}) (result|request): (?=\[)/.exec(
    text,
  );
  if (found === null) return undefined;
  const [marker, method = "", what = ""] = found;
  const head = text.slice(0, found.index + marker.length);
  const dump = text.slice(head.length).trimEnd();
  if (!dump.endsWith("]")) return undefined;
  let issues: unknown;
  try {
    issues = JSON.parse(dump);
  } catch {
    return undefined;
  }
  const issueList =
    Array.isArray(issues) &&
    issues.length > 0 &&
    issues.every((i) => typeof i === "object" && i !== null && typeof (i as Issue).code === "string");
  if (!issueList) return undefined;
  const ran =
    method === "tools/call" && what === "result"
      ? " — the server's MCP SDK refused the result its own tool returned, so the tool ran but its result was not sent (a fault of the server)"
      : "";
  return `${head}${summarizeIssues(issues as Issue[])}${ran}`;
}

/**
 * An error svc raised about server `name` while the SSE transport opened its event stream (the OAuth
 * provider's `sp: not logged in — run …`, `sp: token refresh failed — …`): the stream's EventSource
 * flattens it into the SDK's `SSE error: <message>`, while Streamable HTTP passes the same error through.
 * Undefined for any other error; otherwise svc's error again, so both transports report it alike.
 */
export function ownErrorInSseStream(name: string, err: unknown): SvcError | undefined {
  if (!isSseError(err)) return undefined;
  const message = /^SSE error: (?:SvcError: )?([\s\S]*)$/.exec(err.message)?.[1];
  if (message === undefined || !message.startsWith(`${name}: `)) return undefined;
  return new SvcError("oauth", message, { cause: err });
}

/**
 * Why the SSE event stream dropped, without the EventSource's wrapping: the SDK reports it as
 * `SSE error: TypeError: terminated: other side closed`, and a stream the server ended cleanly (a server
 * stopped or restarted) as `SSE error: undefined`.
 */
export function sseDropCause(err: SseError): string {
  const cause = err.message
    .replace(/^SSE error: /, "")
    .replace(/^TypeError: /, "")
    .trim();
  return cause === "" || cause === "undefined" ? "the server ended the stream" : cause;
}

/**
 * An error whose message svc put together from errors already described (describeTransportError): the
 * protocol eras' `initialize was refused (…), and the server/discover probe … failed too (…) — …`. It is
 * quoted as it is: its parts' bodies are cut already, and the whole must not be cut as one body, which
 * would drop what svc says after the first (the second answer, what to do). Made by `composedError`.
 */
export class ComposedError extends Error {
  /**
   * The same text with the errors it quotes as the system said them (no secret hidden, no url named as
   * written): read for what to check (`connect ECONNREFUSED <host>:<port>`, `getaddrinfo ENOTFOUND <host>`),
   * never shown. The message itself when none was given. Not enumerable: no serialisation of the error
   * (JSON.stringify, the inspector relay's redactInspection, a spread) carries it.
   */
  declare readonly systemsWords: string;
  constructor(message: string, options?: ErrorOptions & { readonly systemsWords?: string }) {
    super(message, options);
    Object.defineProperty(this, "systemsWords", {
      value: options?.systemsWords ?? message,
      enumerable: false,
      writable: false,
      configurable: false,
    });
  }
}

/** How a composed message quotes what it is made of (`composedError`). */
export interface Quoting {
  /** An error it quotes (describeTransportError). */
  error(err: unknown): string;
  /** A text of svc's own that may name the url or its host (an SSE stream's message endpoint). */
  text(text: string): string;
}

/**
 * An error (a `Kind` of ComposedError) whose message `compose` makes of the errors it quotes, each
 * described with `secrets` hidden and a url a `${VAR}` gave named as written first (`shown`: a host from
 * `.env`, one of the secrets, would otherwise be hidden before it could be named so); its `systemsWords`
 * are the same composition as the system said them, for the hints read from them.
 */
export function composedError<E extends ComposedError>(
  compose: (quote: Quoting) => string,
  secrets: readonly string[],
  shown: ((text: string) => string) | undefined,
  options: ErrorOptions,
  Kind: new (message: string, options?: ErrorOptions & { readonly systemsWords?: string }) => E,
): E {
  const message = compose({
    error: (err) => describeTransportError(err, secrets, shown),
    text: (text) => scrub(shown?.(text) ?? text, secrets),
  });
  return new Kind(message, {
    ...options,
    systemsWords: compose({ error: systemsWords, text: (text) => text }),
  });
}

/**
 * A transport error as the system said it, for the hints read from it: a composed one's `systemsWords`, any
 * other described with nothing hidden or named as written. Never shown as it is.
 */
export function systemsWords(err: unknown): string {
  return err instanceof ComposedError ? err.systemsWords : describeTransportError(err, []);
}

/**
 * A request of the connect refused right after `initialize` was answered, as Streamable HTTP refuses a
 * request for its session (404, or a 400 naming the session): the url is the server's endpoint, since it
 * answered `initialize`, so the wrong path is not what to check. See refusedAfterInitialize.
 */
export class RefusedAfterInitializeError extends ComposedError {}

/**
 * Refused for the session `initialize` had just opened (its answer gave an Mcp-Session-Id): servers run as
 * several instances behind a load balancer do this.
 */
export class ForgottenSessionError extends RefusedAfterInitializeError {}

/**
 * Refused after an `initialize` answered without an Mcp-Session-Id: there was no session to forget. A proxy
 * that drops the header from the answer does this (the server then finds no session on the next request:
 * the TypeScript SDK's examples answer 400 "Bad Request: No valid session ID provided"), as does a server
 * without sessions that answers 404 for a method it lacks.
 */
export class NoSessionIdError extends RefusedAfterInitializeError {}

export const FORGOTTEN_SESSION =
  "the server no longer knows the session it opened at this connect's initialize: a server run as several instances behind a load balancer does this when a request reaches another instance than the one that opened the session — route each session to one instance (session affinity on the Mcp-Session-Id header)";

/**
 * The content type of a 2xx POST answer that is neither JSON nor an event stream (a login page or proxy in
 * front of the server), which the SDK's Streamable HTTP transport reports with the body dropped; else undefined.
 */
export function unexpectedContentType(err: unknown): string | undefined {
  const found = /^Streamable HTTP error: Unexpected content type: (.*)$/.exec(
    err instanceof Error ? err.message : "",
  );
  return found === null ? undefined : found[1]?.trim() || "none";
}

/**
 * A transport error for a person: its causes, and its HTTP status when the SDK's message lacks it
 * (an empty body leaves "Error POSTing to endpoint: " with nothing after it); a failed validation as one
 * line (describeMalformed), not the issues' JSON. `secrets` (the entry's credentials, the gateway's own) are
 * redacted from the server's text before it is cut: a cut through one would leave its start, which a
 * redaction afterwards no longer recognizes.
 */
export function describeTransportError(
  err: unknown,
  secrets: readonly string[],
  /**
   * Applied before `secrets` are hidden: a url a `${VAR}` gave names its host as written (a host from `.env`,
   * one of the entry's secrets, would otherwise be hidden before it could be named so).
   */
  shown: (text: string) => string = (text) => text,
): string {
  if (err instanceof ComposedError) return err.message;
  const malformed = describeMalformed(err);
  if (malformed !== undefined) return excerpt(scrub(malformed, secrets), MESSAGE_EXCERPT_CHARS);
  // A POST's body the SDK's transport read as JSON (its Content-Type said so) that is none: an empty body, "OK".
  if (err instanceof SyntaxError) return `the server's answer is not valid JSON (${err.message})`;
  const unexpected = unexpectedContentType(err);
  if (unexpected !== undefined)
    return `the server answered a POST with content type ${JSON.stringify(unexpected)}, not MCP's application/json or text/event-stream (a login page or a proxy in front of the server answers so)`;
  // A TypeScript-SDK server sends an McpError's message with its "MCP error <code>: " prefix, and the
  // client adds the prefix again: "MCP error -32002: MCP error -32002: Resource ... not found".
  // The SSE stream's EventSource flattens a fetch that failed (a refused connection, DNS) into
  // "SSE error: TypeError: fetch failed: ...", where Streamable HTTP says "fetch failed: ...": read alike.
  const described = scrub(shown(describeWithCauses(err)), secrets)
    .replace(/(MCP error -?\d+: )\1+/g, "$1")
    .replace(/^SSE error: TypeError: (?=fetch failed\b)/, "")
    // The MCP SDK names its own option, which svc does not expose (connect.ts's redirectHint says what to do).
    .replace(/ \(redirectPolicy: 'same-origin'\)/g, "");
  const refused = err instanceof McpError ? summarizedIssueDump(described) : undefined;
  if (refused !== undefined) return excerpt(refused, MESSAGE_EXCERPT_CHARS);
  // A server's own error message (an McpError's, quoted whole by the SDK) may be any length: cut, as a body is.
  const text = excerpt(shortBody(described), MESSAGE_EXCERPT_CHARS);
  const status = httpStatusOf(err);
  // Said already: "(HTTP 404)" (SSE POST and stream), "status code (401)"; a body's digits do not count.
  if (status === undefined || new RegExp(`HTTP ${status}\\b|status code \\(${status}\\)`).test(text))
    return text;
  return `${text.replace(/:\s*$/, "")} (HTTP ${status})`;
}

/**
 * Whether a request failed with the server's own JSON-RPC error answer — the server is there and
 * answering — rather than with an error the SDK makes up on this side: its request timeout (which carries
 * the timeout in `data`) or the connection closing under the request; nor an answer saying our session is
 * gone. Transport errors (HTTP 404 for an expired session, a refused connection) are no McpError.
 */
export function answeredWithError(err: unknown): boolean {
  if (!(err instanceof McpError)) return false;
  const data = err.data as { timeout?: unknown } | undefined;
  if (err.code === ErrorCode.RequestTimeout && data?.timeout !== undefined) return false;
  if (
    err.code === ErrorCode.ConnectionClosed &&
    /: (Connection closed|Request was cancelled)$/.test(err.message)
  )
    return false;
  // "Session not found", "Invalid or expired session": the server is there, but our session is gone.
  return !/\bsession\b/i.test(err.message);
}

/** How much of an HTTP error body a message quotes. */
export const BODY_EXCERPT_CHARS = 300;

/**
 * The body the SDK quotes whole in "Error POSTing to endpoint: <body>" (and svc in "Error GETting the SSE
 * stream (HTTP 401): <body>", RefusedSseStream), as one short line: a proxy's or
 * login page's HTML (a 502 from a CDN, kilobytes long) as its title, any other body on one line and cut
 * at BODY_EXCERPT_CHARS — the status, the log line and `svc mcp list` stay readable. `text` has its
 * credentials redacted already (see excerpt).
 */
export function shortBody(text: string): string {
  const match =
    /^([\s\S]*?Error (?:POSTing to endpoint|GETting the SSE stream)(?: \(HTTP \d+\))?: )([\s\S]*)$/.exec(
      text,
    );
  if (match === null) return text;
  const [, head = "", body = ""] = match;
  const page = htmlPageSummary(body);
  if (page !== undefined) return `${head}${page}`;
  return `${head}${excerpt(body.replace(/\s+/g, " ").trim(), BODY_EXCERPT_CHARS)}`;
}

/**
 * How much of a server's error message svc quotes (an McpError's, a URL elicitation's): a server may answer a
 * call with megabytes of text, which would reach the log line, the run's journal and the model whole.
 */
export const MESSAGE_EXCERPT_CHARS = 2000;

/**
 * `text` as it is when it has at most `limit` characters, else its start and how many characters more,
 * cut only before a delimiter, never inside a word. Redact credentials from `text` before: one that holds a
 * delimiter (`user:password`) may be cut in two, and its start, kept, is no longer recognized as one.
 */
export function excerpt(text: string, limit: number): string {
  if (text.length <= limit) return text;
  let cut = limit;
  while (cut > 0 && !/[\s"'`,;:{}[\]()<>]/.test(text[cut] ?? "")) cut--;
  if (cut === 0) return `(${text.length} characters, not shown)`;
  return `${text.slice(0, cut)}… (${text.length - cut} more characters)`;
}

/** Streamable HTTP's refusal of a request's session: 404, or a 400 naming the session (the TypeScript SDK's examples). */
function forgotSession(err: unknown): boolean {
  return (
    isStreamableHttpError(err) && (err.code === 404 || (err.code === 400 && /session/i.test(err.message)))
  );
}

/** What a refusal after an `initialize` answered without an Mcp-Session-Id says: `request` was refused. */
export function noSessionIdNote(request: string): string {
  return `the server answered this connect's initialize without an Mcp-Session-Id header, then refused its ${request} — if a proxy is in front of the server, it may drop that header: check that the proxy passes Mcp-Session-Id through (in answers and in requests)`;
}

/**
 * A request of the connect (its handshake's `request`, or its first tools/list), made after `initialize` was
 * answered, refused as Streamable HTTP refuses a request for its session: with `sessionId` (the one that
 * answer gave), for the session the handshake had just opened (ForgottenSessionError); without one, after
 * an answer that gave no session (NoSessionIdError). Undefined for any other error.
 */
export function refusedAfterInitialize(
  err: unknown,
  sessionId: string | undefined,
  request: string,
  secrets: readonly string[],
  /** A url a `${VAR}` gave named as written, before `secrets` are hidden (describeTransportError). */
  shown?: (text: string) => string,
): RefusedAfterInitializeError | undefined {
  if (!forgotSession(err)) return undefined;
  const note = sessionId === undefined ? noSessionIdNote(request) : FORGOTTEN_SESSION;
  const ErrorClass = sessionId === undefined ? NoSessionIdError : ForgottenSessionError;
  return composedError(
    (quote) => `${quote.error(err)} — ${note}`,
    secrets,
    shown,
    { cause: err },
    ErrorClass,
  );
}
