import { STATUS_CODES } from "node:http";
import { SHUTTING_DOWN, UNKNOWN_ROUTE } from "../../streams/frontAnswers.js";
import type { Pipeline } from "../../streams/pipeline.js";
import { declaredLength, PAYLOAD_TOO_LARGE } from "../../streams/stages/size.js";
import {
  AcceptedBody,
  errorOutcome,
  type Inbound,
  type Outcome,
  outcome,
  unavailableOutcome,
} from "../../streams/types.js";
import { INSTANCE_HEADER } from "./instanceHeader.js";

/** Method, path and headers: what an adapter copies out of the request before anything async happens. */
export interface RequestHead {
  /** Upper case. */
  readonly method: string;
  /** Without the query string. */
  readonly path: string;
  /**
   * The query string (after `?`) as received, set by the uWS adapter only to be checked for bytes a
   * request target may not hold (node:http's parser refuses those itself). Never read otherwise.
   */
  readonly query?: string | undefined;
  /** Lower-cased names; repeated headers joined with ", " (`addHeaderLine`). */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * The host a request target in absolute form names (`GET http://localhost/metrics`), set by the
   * node:http adapter (uWS closes such requests): RFC 9112 §3.2.2 has it stand for the request's host in
   * place of `Host`, which is still checked as sent.
   */
  readonly targetHost?: string;
}

/**
 * A body as read: the bytes; `too_large` past the limit; `busy` when it was not read at all, the bodies
 * already arriving holding what the server may buffer (`BodyBudget`).
 */
export type BodyRead = Buffer | "too_large" | "busy";

/** How an adapter hands over the body: chunks are counted against `limit`; past it reading stops. */
export interface BodySource {
  read(limit: number, done: (body: BodyRead) => void): void;
}

/**
 * Writes the one answer; `close` says the body is left unread and the connection must not serve another
 * request. The adapter answers with `Connection: close` and reads and drops the rest of the body (up to
 * `LINGER_BYTES`) before closing: a close with unread bytes resets the connection, and a sender still
 * writing its body (fetch, most HTTP clients) then reports ECONNRESET/EPIPE instead of the answer.
 * `refusal`: why the pipeline refused the request (a 401's reason), for the delivery history (observe.ts);
 * never sent, and the adapters ignore it.
 */
export type Reply = (answer: Outcome, close?: boolean, refusal?: string) => void;

/** How many bodies of `max_body_bytes` a server buffers at once, across all its connections. */
export const BUFFERED_BODIES = 64;

/**
 * The answer to a request whose body would pass what the server may buffer at once: from its head when
 * the bodies arriving hold every byte of it, else when a piece of its body would pass it (the rest is read
 * and dropped). A body holds what it took for at most the request deadline (10 s).
 */
export const BODIES_BUSY: Outcome = {
  ...errorOutcome(503, "Too many request bodies arriving at once, retry later"),
  headers: { "Retry-After": "10" },
};

/**
 * The bytes of request bodies a server is receiving, bounded together at BUFFERED_BODIES × the body
 * limit (an ingress thread: its share of that), so connections that each send most of a large body and
 * never end it cannot hold memory without bound. A body takes the memory it is read into as its bytes
 * arrive (`more`: what its BodyCollector holds, never more than twice its bytes or GATHER_MIN), whether its
 * length was declared or it comes chunked, and gives it back once it is read whole, refused or its request
 * ends: a head that declares a large body and sends nothing holds nothing, so 64 such requests cannot shut
 * every route out. A body whose next piece would pass the bound is not read on (`busy`); none is read
 * while no byte is left. A body taken under another limit (a reload changed `max_body_bytes` while it
 * arrived) counts as the same share of the limit in force: three bodies of a lowered limit's old size
 * still hold three places of 64, not every place.
 */
export class BodyBudget {
  /** The limit of the bodies `held` counts (the one in force at the last start). */
  private limit = 0;
  private held = 0;
  /** Bytes held by bodies taken under other limits, by limit: empty but right after a reload. */
  private readonly earlier = new Map<number, number>();
  /** `shares`: how many servers (ingress threads) divide the bound. */
  constructor(private readonly shares = 1) {}
  /**
   * Whether the body of a request with `headers` may start arriving under `limit`: false when it has one
   * and the bodies already arriving hold every byte the server may buffer. A request with no body always
   * may. Takes nothing: the body takes its bytes as they arrive (`more`).
   */
  admits(headers: Readonly<Record<string, string>>, limit: number): boolean {
    if (limit !== this.limit) this.switchTo(limit);
    const bodied = (declaredLength(headers) ?? 0) > 0 || headers["transfer-encoding"] !== undefined;
    if (!bodied) return true;
    const earlier = this.earlier.size === 0 ? 0 : this.earlierShare(limit);
    return earlier + this.held < (BUFFERED_BODIES * limit) / this.shares;
  }
  /**
   * Takes `bytes` more for a body read under `limit` (the limit in force when it was admitted), as its
   * pieces arrive: false, taking nothing, when they would pass the bound.
   */
  more(bytes: number, limit: number): boolean {
    const bound = (BUFFERED_BODIES * this.limit) / this.shares;
    const earlier = this.earlier.size === 0 ? 0 : this.earlierShare(this.limit);
    if (limit === this.limit) {
      if (earlier + this.held + bytes > bound) return false;
      this.held += bytes;
      return true;
    }
    // Taken before a reload changed the limit: counted with the bodies of its own limit, as its share.
    if (earlier + this.held + (bytes * this.limit) / limit > bound) return false;
    this.earlier.set(limit, (this.earlier.get(limit) ?? 0) + bytes);
    return true;
  }
  /** Gives back what a body taken under `limit` took. */
  give(bytes: number, limit: number): void {
    if (limit === this.limit) {
      this.held -= bytes;
      return;
    }
    const left = (this.earlier.get(limit) ?? 0) - bytes;
    if (left > 0) this.earlier.set(limit, left);
    else this.earlier.delete(limit);
  }
  private switchTo(limit: number): void {
    if (this.held > 0) this.earlier.set(this.limit, (this.earlier.get(this.limit) ?? 0) + this.held);
    this.held = this.earlier.get(limit) ?? 0;
    this.earlier.delete(limit);
    this.limit = limit;
  }
  /** The bytes held under other limits, each body as the same share of `limit` as it was of its own. */
  private earlierShare(limit: number): number {
    let share = 0;
    for (const [at, bytes] of this.earlier) share += (bytes * limit) / at;
    return share;
  }
}

/** How much of an unread body is read and dropped after an early answer before the connection is cut. */
export const LINGER_BYTES = 64 * 1024 * 1024;

export type RequestHandler = ((head: RequestHead, body: BodySource, reply: Reply) => void) & {
  /**
   * A request the HTTP server answered itself, before it reached the handler (node:http's parser
   * refusals; `head` when the request line and headers were read): counted and logged as answered.
   */
  refused?: (answer: Outcome, head?: RequestHead) => void;
};

export interface IngressCore {
  readonly pipeline: Pipeline;
  multiplexProfiles(): boolean;
  maxBodyBytes(): number;
  now(): number;
  /** A clock that is never set (`Clock.elapsed`): which of two requests came first, whatever `now` did. */
  elapsed?(): number;
  onInternalError(err: unknown): void;
  /** The gateway is stopping: `/health` says so (503) instead of `ok`. */
  stopping?(): boolean;
  /** The heap is near its limit: a request that would bring a body is refused (503) from its head. */
  shortOfMemory?(): boolean;
  /** The gateway's instance id, sent with each `/health` 200 (`healthAnswer`). */
  readonly instance?: string;
}

/** The answer to a request while the heap is near its limit (io/heapWatch.ts): its body is never read. */
export const SHORT_OF_MEMORY = unavailableOutcome("The server is short of memory, retry later");

export const HEALTH = outcome(200, { status: "ok", platform: "webhook" });
export const NOT_FOUND = errorOutcome(404, "Not found");
/** RFC 9110 §15.5.6: a 405 names the methods the path does allow. */
export const METHOD_NOT_ALLOWED: Outcome = {
  ...errorOutcome(405, "Method not allowed"),
  headers: { Allow: "POST" },
};
const HEALTH_METHOD_NOT_ALLOWED: Outcome = {
  ...errorOutcome(405, "Method not allowed"),
  headers: { Allow: "GET, HEAD" },
};

type Target =
  | { readonly kind: "health" }
  | { readonly kind: "webhook"; readonly routeName: string; readonly profile: string | undefined }
  /** Under a webhook prefix but not a route name (`/webhooks/`, `/webhooks/a/b`, a trailing slash). */
  | { readonly kind: "unknown_route" }
  | { readonly kind: "none" };

const SEGMENT = /^[^/]+$/;

/**
 * One path segment as a name: percent-escapes decoded (RFC 3986 §6.2.2.2: `my%2Droute` is `my-route`),
 * undefined when empty, badly escaped, or decoding to something with a `/`.
 */
function segmentName(raw: string | undefined): string | undefined {
  if (raw === undefined || !SEGMENT.test(raw)) return undefined;
  if (!raw.includes("%")) return raw;
  try {
    const name = decodeURIComponent(raw);
    return SEGMENT.test(name) ? name : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The last path's endpoint: a sender posts to one route, and each request looks its path up twice (its
 * answer, its metrics' label). A target is never changed once made.
 */
let lastEndpoint: { readonly path: string; readonly multiplex: boolean; readonly target: Target } | undefined;

/** Which endpoint a path names; the profile prefix exists only when multiplexing is on. */
export function endpointOf(path: string, multiplex: boolean): Target {
  if (lastEndpoint !== undefined && lastEndpoint.path === path && lastEndpoint.multiplex === multiplex)
    return lastEndpoint.target;
  const target = endpointFor(path, multiplex);
  lastEndpoint = { path, multiplex, target };
  return target;
}

function endpointFor(path: string, multiplex: boolean): Target {
  if (path === "/health") return { kind: "health" };
  if (path.startsWith("/webhooks/")) {
    const routeName = segmentName(path.slice("/webhooks/".length));
    return routeName === undefined
      ? { kind: "unknown_route" }
      : { kind: "webhook", routeName, profile: undefined };
  }
  if (multiplex && path.startsWith("/p/")) {
    const parts = path.split("/");
    // ["", "p", profile, "webhooks", route]
    const profile = segmentName(parts[2]);
    const routeName = segmentName(parts[4]);
    if (parts.length === 5 && parts[3] === "webhooks" && profile !== undefined && routeName !== undefined) {
      return { kind: "webhook", routeName, profile };
    }
    if (parts.length >= 5 && parts[3] === "webhooks") return { kind: "unknown_route" };
  }
  return { kind: "none" };
}

/** The body last serialised by `answerText` and its JSON: answer bodies are never changed once made. */
let lastBody: Outcome["body"] | undefined;
let lastJson = "";
/** A 202's text up to its delivery ID, for the route and event of the last one (the same on a busy route). */
let acceptedRoute: string | undefined;
let acceptedEvent: string | undefined;
let acceptedHead = "";

/** `JSON.stringify(body)`, from its texts: only the delivery ID is new on most requests. */
function acceptedJson(body: AcceptedBody): string {
  if (body.route !== acceptedRoute || body.event !== acceptedEvent) {
    acceptedRoute = body.route;
    acceptedEvent = body.event;
    acceptedHead = `{"status":"accepted","route":${JSON.stringify(body.route)},"event":${JSON.stringify(body.event)},"delivery_id":`;
  }
  return `${acceptedHead}${JSON.stringify(body.delivery_id)}}`;
}

/**
 * The text an answer is sent with: its `text` when it has one, else its body's JSON. The last body is
 * remembered, so a run of one constant answer (a flood of 401s, events a filter ignores) is serialised once.
 */
export function answerText(outcome: Outcome): string {
  if (outcome.text !== undefined) return outcome.text.body;
  if (outcome.body !== lastBody) {
    lastJson =
      outcome.body instanceof AcceptedBody ? acceptedJson(outcome.body) : JSON.stringify(outcome.body);
    lastBody = outcome.body;
  }
  return lastJson;
}

/** The answer's Content-Type: its `text`'s own, else JSON. */
export function contentTypeOf(outcome: Outcome): string {
  return outcome.text === undefined ? "application/json" : outcome.text.contentType;
}

const STATUS_LINES = new Map<number, string>();

/** `200 OK`-style status line for adapters that need one (cached: the hot path answers a handful of codes). */
export function statusLine(status: number): string {
  let line = STATUS_LINES.get(status);
  if (line === undefined) {
    line = `${status} ${STATUS_CODES[status] ?? "Unknown"}`;
    STATUS_LINES.set(status, line);
  }
  return line;
}

/**
 * RFC 9112 §6.3: several Content-Length values (repeated headers arrive joined with ", ") make the body's
 * framing ambiguous, the shape of request smuggling behind a proxy that reads the other value. node:http
 * refuses them itself; uWS frames by the first, so the shared flow refuses them too.
 */
export const AMBIGUOUS_LENGTH = errorOutcome(400, "Bad request: more than one Content-Length");

/**
 * RFC 9112 §3.2: a request with more than one Host line (repeated headers arrive joined with ", ") must be
 * answered 400, as nginx answers it: a proxy in front that reads the other value routes the request to
 * one host and its logs and checks name another. Neither server checks it itself.
 */
export const AMBIGUOUS_HOST = errorOutcome(400, "Bad request: more than one Host header");

/** RFC 9112 §3.2: so must a Host that is not `host[:port]` (RFC 3986 §3.2.2, §3.2.3). */
export const INVALID_HOST = errorOutcome(
  400,
  "Bad request: the Host header is not a host name or address with an optional port",
);

/**
 * `host[:port]`: an IP literal in brackets, or a name or IPv4 address of unreserved characters,
 * percent-escapes and sub-delims (a comma left out: a list is more than one Host), which may be empty.
 * A name in raw UTF-8 (`bücher.example` from a client that does not punycode it) is let through, as
 * nginx lets it through: it is no framing or routing ambiguity.
 */
const HOST = /^(?:\[[\w:.~!$&'()*+,;=%-]+\]|[\w.~!$&'()*+;=%\u0080-\uffff-]*)(?::\d*)?$/;

/** The last Host value found well-formed: a sender names the same host on every request. */
let wellFormedHost: string | undefined;

/** The answer a Host value calls for, if any: undefined for a well-formed one (or none). */
function hostRefusal(host: string | undefined): HeadAnswer | undefined {
  if (host === undefined || host === wellFormedHost) return undefined;
  if (HOST.test(host)) {
    wellFormedHost = host;
    return undefined;
  }
  return host.includes(",") ? ANSWER_AMBIGUOUS_HOST : ANSWER_INVALID_HOST;
}

/**
 * RFC 9112 §6.3: a request whose Transfer-Encoding does not end with `chunked` (`chunked, identity`, or
 * the header sent twice) has no reliable body length and must be answered 400 and closed. node:http
 * refuses it itself; uWS reads it as chunked, so the shared flow refuses it too.
 */
export const CHUNKED_NOT_LAST = errorOutcome(400, "Bad request: Transfer-Encoding must end with chunked");

export function chunkedNotLast(transferEncoding: string | undefined): boolean {
  if (transferEncoding === undefined) return false;
  const codings = transferEncoding.split(",").map((coding) => coding.trim().toLowerCase());
  // §6.1: chunked is applied once, last (`chunked, chunked`, or the header sent twice, is refused too).
  return codings.indexOf("chunked") !== codings.length - 1;
}

/** §6.1: `chunked, chunked` (or `chunked` on two header lines) ends with chunked but applies it twice. */
export const CHUNKED_TWICE = errorOutcome(
  400,
  "Bad request: Transfer-Encoding applies chunked more than once (it must be applied once, last)",
);

/** A Transfer-Encoding that names `chunked` more than once (what `CHUNKED_TWICE` answers). */
export function chunkedTwice(transferEncoding: string | undefined): boolean {
  let chunked = 0;
  for (const member of transferEncoding?.split(",") ?? []) {
    if (member.trim().toLowerCase() === "chunked") chunked += 1;
  }
  return chunked > 1;
}

/**
 * RFC 9112 §6.1: a transfer coding before `chunked` that svc cannot undo (`gzip, chunked`: a gzip stream
 * inside the chunks) is answered 501 and closed, as nginx answers it: reading the chunks as the body would
 * hand the pipeline bytes the sender says are still coded. `identity` adds nothing and is passed over.
 * Senders compress a webhook body with Content-Encoding, which svc undoes (docs/webhook.md).
 */
export const TRANSFER_CODING_NOT_IMPLEMENTED = errorOutcome(
  501,
  "Not implemented: a Transfer-Encoding other than chunked",
);

/** A coding other than `chunked` and `identity` (an empty list member is none) in a Transfer-Encoding. */
export function unknownTransferCoding(transferEncoding: string | undefined): boolean {
  if (transferEncoding === undefined) return false;
  for (const member of transferEncoding.split(",")) {
    const coding = member.trim().toLowerCase();
    if (coding !== "" && coding !== "chunked" && coding !== "identity") return true;
  }
  return false;
}

/**
 * RFC 9110 §5.5: a field value is visible characters, spaces and tabs; node:http's parser refuses any
 * other control byte with 400, and uWS closes on all of them but DEL (0x7f), which it passes on inside a
 * value. The shared flow refuses a DEL too, so both servers answer such a request alike (never processed).
 */
export const BAD_REQUEST = errorOutcome(400, "Bad request");

/**
 * RFC 9112 §3.2: a request target is visible ASCII. node:http's parser refuses any other byte with 400;
 * uWS passes a path or query with raw UTF-8 (`/webhooks/café`, `?q=é`) on, so the shared flow refuses it too.
 */
const NOT_TARGET_BYTES = /[^\x21-\x7e]/;
/** The last request path found well-formed (a sender posts to one route). */
let wellFormedPath: string | undefined;

/**
 * A request node:http's parser would have refused that uWS passes on: answered BAD_REQUEST, closed.
 * RFC 9110 §8.6: a Content-Length is digits; uWS closes on most other values itself, but reads an empty
 * one (`Content-Length:` with nothing after it) as 0 and takes the body's bytes for a next request.
 */
function malformedHead(head: RequestHead): boolean {
  if (head.headers["content-length"] !== undefined && declaredLength(head.headers) === undefined) return true;
  if (head.path !== wellFormedPath) {
    // RFC 9112 §3.2.3, §3.2.4: the asterisk form (`OPTIONS *`) and the authority form (`CONNECT host:443`)
    // name no resource here; node:http hands them over (uWS closes on them), nginx answers them 400.
    if (head.path.charCodeAt(0) !== 0x2f) return true;
    if (NOT_TARGET_BYTES.test(head.path)) return true;
    wellFormedPath = head.path;
  }
  if (head.query !== undefined && NOT_TARGET_BYTES.test(head.query)) return true;
  for (const name in head.headers) if ((head.headers[name] as string).includes("\x7f")) return true;
  return false;
}

/** An answer decided from the head alone, before any route is looked up; `close` as for `Reply`. */
export interface HeadAnswer {
  readonly outcome: Outcome;
  readonly close: boolean;
}

/**
 * The refusals of a request whose framing is in doubt (two lengths, a Transfer-Encoding read otherwise than
 * its sender meant, a Host or head node:http's parser refuses): where its next request starts is unknown,
 * so no byte after it may be served.
 */
export const FRAMING_REFUSALS: ReadonlySet<Outcome> = new Set([
  AMBIGUOUS_LENGTH,
  AMBIGUOUS_HOST,
  INVALID_HOST,
  CHUNKED_NOT_LAST,
  CHUNKED_TWICE,
  TRANSFER_CODING_NOT_IMPLEMENTED,
  BAD_REQUEST,
]);

const ANSWER_AMBIGUOUS_LENGTH: HeadAnswer = { outcome: AMBIGUOUS_LENGTH, close: true };
const ANSWER_AMBIGUOUS_HOST: HeadAnswer = { outcome: AMBIGUOUS_HOST, close: true };
const ANSWER_INVALID_HOST: HeadAnswer = { outcome: INVALID_HOST, close: true };
const ANSWER_CHUNKED_NOT_LAST: HeadAnswer = { outcome: CHUNKED_NOT_LAST, close: true };
const ANSWER_CHUNKED_TWICE: HeadAnswer = { outcome: CHUNKED_TWICE, close: true };
const ANSWER_TRANSFER_CODING: HeadAnswer = { outcome: TRANSFER_CODING_NOT_IMPLEMENTED, close: true };
const ANSWER_BAD_REQUEST: HeadAnswer = { outcome: BAD_REQUEST, close: true };
const ANSWER_NOT_FOUND: HeadAnswer = { outcome: NOT_FOUND, close: false };
// As for an unknown route name (preflight): answered before the body is read, connection closed.
const ANSWER_UNKNOWN_ROUTE: HeadAnswer = { outcome: UNKNOWN_ROUTE, close: true };
// HEAD too, as health checkers send it; the adapters write no body for HEAD.
const ANSWER_HEALTH: HeadAnswer = { outcome: HEALTH, close: false };
const ANSWER_HEALTH_METHOD: HeadAnswer = { outcome: HEALTH_METHOD_NOT_ALLOWED, close: false };

/**
 * The `/health` 200 of the gateway `instance`: HEALTH, its body unchanged, with the id in its `Svc-Instance`
 * header, which `svc gateway status|start|stop` compare with the one its gateway.json records, so another
 * program (or another gateway) answering at a gone gateway's address is not taken for it.
 */
export function healthAnswer(instance: string | undefined): HeadAnswer {
  return instance === undefined
    ? ANSWER_HEALTH
    : { outcome: { ...HEALTH, headers: { [INSTANCE_HEADER]: instance } }, close: false };
}

/**
 * The refusal (one of FRAMING_REFUSALS, closing the connection) a head calls for whatever path it names:
 * two lengths, a wrong Host, a Transfer-Encoding that does not end with one `chunked` or holds a coding svc
 * cannot undo, a head node:http's parser refuses. Undefined for a head whose framing is sound.
 */
export function framingRefusal(head: RequestHead): HeadAnswer | undefined {
  if (head.headers["content-length"]?.includes(",")) return ANSWER_AMBIGUOUS_LENGTH;
  const badHost = hostRefusal(head.headers.host);
  if (badHost !== undefined) return badHost;
  const transferEncoding = head.headers["transfer-encoding"];
  if (chunkedNotLast(transferEncoding))
    return chunkedTwice(transferEncoding) ? ANSWER_CHUNKED_TWICE : ANSWER_CHUNKED_NOT_LAST;
  if (unknownTransferCoding(transferEncoding)) return ANSWER_TRANSFER_CODING;
  if (malformedHead(head)) return ANSWER_BAD_REQUEST;
  return undefined;
}

/**
 * The answer the head alone decides (framing, endpoint, method on `/health`), or the webhook route it
 * names, whatever the method: whether another method than POST is 405 or 404 depends on the route
 * (`createRequestHandler`). Pure: an ingress thread answers with it at once too, so a client that
 * half-closes after its request (uWS drops an answer that comes after the client's FIN) gets these
 * answers on every thread count.
 */
export function headAnswer(
  head: RequestHead,
  multiplex: boolean,
  /** The `/health` 200 (`healthAnswer`). */
  health: HeadAnswer = ANSWER_HEALTH,
): HeadAnswer | (Target & { kind: "webhook" }) {
  const refused = framingRefusal(head);
  if (refused !== undefined) return refused;
  const target = endpointOf(head.path, multiplex);
  if (target.kind === "none") return ANSWER_NOT_FOUND;
  if (target.kind === "unknown_route") return ANSWER_UNKNOWN_ROUTE;
  if (target.kind === "health")
    return head.method === "GET" || head.method === "HEAD" ? health : ANSWER_HEALTH_METHOD;
  return target;
}

/** The request flow both adapters share: endpoint, preflight (route + size before reading), body, pipeline. */
export function createRequestHandler(core: IngressCore): RequestHandler {
  const health = healthAnswer(core.instance);
  return (head, body, reply) => {
    const target = headAnswer(head, core.multiplexProfiles(), health);
    if (!("kind" in target)) {
      // A stopping gateway takes no more events: a health check on a kept-alive connection must not
      // call it healthy (a load balancer would go on sending it webhooks, each answered 503).
      if (target === health && core.stopping?.() === true) return reply(SHUTTING_DOWN, false);
      return reply(target.outcome, target.close);
    }
    const receivedAt = core.now();
    const receivedTick = core.elapsed?.();
    const headOnly: Inbound = {
      method: head.method,
      path: head.path,
      routeName: target.routeName,
      profile: target.profile,
      headers: head.headers,
      body: EMPTY,
      receivedAt,
      receivedTick,
    };
    const admitted = core.pipeline.admit(headOnly);
    if (head.method !== "POST") {
      // The route lookup comes first, so a name that is no route (or another profile's) is
      // 404 whatever the method; a route that exists answers another method 405 (RFC 9110 §15.5.6).
      const found = admitted.outcome === undefined || admitted.outcome === PAYLOAD_TOO_LARGE;
      return found ? reply(METHOD_NOT_ALLOWED, false) : reply(admitted.outcome, true);
    }
    if (admitted.outcome !== undefined) return reply(admitted.outcome, true);
    // A route whose quota is spent is answered from the head: its body is never buffered, and the
    // connection closes (the unread body cannot be skipped safely).
    const limited = core.pipeline.spent(headOnly);
    if (limited !== undefined) return reply(limited, true);
    if (core.shortOfMemory?.() === true) return reply(SHORT_OF_MEMORY, true);
    body.read(core.maxBodyBytes(), (received) => {
      if (received === "too_large") return reply(PAYLOAD_TOO_LARGE, true);
      if (received === "busy") return reply(BODIES_BUSY, true);
      try {
        const inbound: Inbound = {
          method: headOnly.method,
          path: headOnly.path,
          routeName: headOnly.routeName,
          profile: headOnly.profile,
          headers: headOnly.headers,
          body: received,
          receivedAt,
          receivedTick,
        };
        core.pipeline.push(inbound, reply, admitted);
      } catch (err) {
        core.onInternalError(err);
        reply(errorOutcome(500, "Internal error"));
      }
    });
  };
}

const EMPTY = Buffer.alloc(0);

/**
 * Adds one header line (name lower-cased) to `headers`. A repeated header is joined with ", " (RFC 9110
 * §5.3), but a line repeating a value already there adds nothing: a proxy or sender that sends
 * `X-GitHub-Event`, a delivery id or a signature twice would otherwise name no event ("push, push"),
 * a new delivery id and no valid signature. An empty line next to one with a value adds nothing either
 * (RFC 9110 §5.6.1: empty list elements are ignored): `X-GitHub-Delivery:` and `X-GitHub-Delivery: abc`
 * are the delivery id `abc`, not `, abc`, which no retry carrying `abc` alone would match. Content-Length
 * and Transfer-Encoding are always joined, so two of them stay visible as ambiguous framing
 * (AMBIGUOUS_LENGTH, CHUNKED_NOT_LAST), and so is Host (AMBIGUOUS_HOST).
 */
export function addHeaderLine(headers: Record<string, string>, name: string, value: string): void {
  if (!Object.hasOwn(headers, name)) {
    headers[name] = value;
    return;
  }
  const seen = headers[name] as string;
  if (name !== "content-length" && name !== "transfer-encoding" && name !== "host") {
    if (value === "" || listHas(seen, value)) return;
    if (seen === "") {
      headers[name] = value;
      return;
    }
  }
  headers[name] = `${seen}, ${value}`;
}

function listHas(joined: string, value: string): boolean {
  return (
    joined === value ||
    joined.startsWith(`${value}, `) ||
    joined.endsWith(`, ${value}`) ||
    joined.includes(`, ${value}, `)
  );
}

/** Pieces kept as they came; past this many, the body is gathered into one growing buffer. */
const KEPT_PIECES = 16;
/** The smallest buffer a body is gathered into. */
const GATHER_MIN = 16 * 1024;

/**
 * Collects body chunks up to a limit; `add` returns false once the total passes it. A body in a few
 * chunks (every ordinary sender) is kept as its chunks, uncopied. Past KEPT_PIECES the chunks are copied
 * into one buffer that doubles as needed: a sender writing its body in tiny chunked pieces (`1\r\na\r\n`,
 * one byte each) would otherwise leave one Buffer object per byte held until the body ends — a 1 MiB body
 * took ~400 MB on node:http and ~200 MB on uWS, so `max_body_bytes` no longer bounded a request's memory.
 * A body whose length was declared (`expected`) and that does not come whole in its first chunk is gathered
 * from that chunk on into one buffer that doubles up to exactly its length: held memory follows the bytes
 * that came (`capacity`, what BodyBudget counts), never the length a head declared.
 */
export class BodyCollector {
  private readonly chunks: Buffer[] = [];
  private gathered: Buffer | undefined;
  private total = 0;
  constructor(
    private readonly limit: number,
    /** The body's declared length (its share of the limit), 0 for a chunked body. */
    private readonly expected = 0,
  ) {}
  /**
   * `lent`: `chunk` is the server's memory only for this call (uWS reuses it), so what is kept of it is
   * copied (once: a chunk gathered is copied straight into the gathered body).
   */
  add(chunk: Buffer, lent = false): boolean {
    this.total += chunk.length;
    if (this.total > this.limit) return false;
    if (chunk.length === 0) return true;
    // A declared body that this chunk does not complete is gathered from its first chunk: one copy of each
    // lent chunk, none at its end. One that comes whole in its first chunk (most) is that chunk.
    if (
      this.gathered === undefined &&
      this.chunks.length < KEPT_PIECES &&
      (this.chunks.length > 0 || this.expected <= this.total)
    ) {
      this.chunks.push(lent ? Buffer.from(chunk) : chunk);
      return true;
    }
    const held = this.total - chunk.length;
    let into = this.gathered;
    if (into === undefined || into.length < this.total) {
      // Twice what came (GATHER_MIN at least), never past the declared length: what a body holds follows
      // its bytes, so a head that declares a large body and sends a byte holds little (BodyBudget).
      const doubled = Math.max(GATHER_MIN, 2 * this.total);
      const wanted = this.expected >= this.total ? Math.min(this.expected, doubled) : doubled;
      const grown = Buffer.allocUnsafe(Math.min(this.limit, wanted));
      if (into === undefined) {
        let at = 0;
        for (const piece of this.chunks) at += piece.copy(grown, at);
        this.chunks.length = 0;
      } else into.copy(grown, 0, 0, held);
      into = grown;
      this.gathered = grown;
    }
    chunk.copy(into, held);
    return true;
  }
  /** Buffers held (for tests: a body in tiny pieces is held in one). */
  get pieces(): number {
    return this.gathered === undefined ? this.chunks.length : 1;
  }
  /** Bytes of the buffers held: what the body takes of the server's BodyBudget. */
  get capacity(): number {
    if (this.gathered !== undefined) return this.gathered.length;
    let bytes = 0;
    for (const piece of this.chunks) bytes += piece.length;
    return bytes;
  }
  body(): Buffer {
    if (this.gathered !== undefined) return this.gathered.subarray(0, this.total);
    return this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks, this.total);
  }
}
