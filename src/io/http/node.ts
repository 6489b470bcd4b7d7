import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { Server, type Socket } from "node:net";
import { declaredLength, PAYLOAD_TOO_LARGE } from "../../streams/stages/size.js";
import { errorOutcome, type Outcome } from "../../streams/types.js";
import { afterArrivedReads } from "./arrivedReads.js";
import {
  AMBIGUOUS_LENGTH,
  addHeaderLine,
  answerText,
  BAD_REQUEST,
  BodyBudget,
  BodyCollector,
  CHUNKED_NOT_LAST,
  CHUNKED_TWICE,
  chunkedNotLast,
  chunkedTwice,
  contentTypeOf,
  LINGER_BYTES,
  type RequestHandler,
  type RequestHead,
  statusLine,
} from "./core.js";
import { withoutUwsEdgeBytes } from "./headerEdges.js";
import { headerField } from "./headerField.js";
import {
  DEADLINE_CHECK_MS,
  type ListenOptions,
  REQUEST_DEADLINE_MS,
  type ServerHandle,
  STOP_GRACE_MS,
} from "./listen.js";
import { bindFailure } from "./listenHint.js";

const NON_ASCII = /[\u0080-\uffff]/;
/**
 * From the raw lines, as uWS gives them: node's `req.headers` keeps only the first of some repeats, and
 * node reads header bytes as Latin-1 where uWS reads UTF-8 (`X-Forge-Event: déploiement` must name the
 * same event on both servers; bytes that are not UTF-8 become U+FFFD on both).
 */
function headersOf(raw: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const value = raw[i + 1] as string;
    const text = NON_ASCII.test(value)
      ? Buffer.from(withoutUwsEdgeBytes(value), "latin1").toString("utf8")
      : value;
    addHeaderLine(headers, (raw[i] as string).toLowerCase(), text);
  }
  return headers;
}

const ABSOLUTE_FORM = /^https?:\/\/[^/?#]*/i;

/**
 * The path and query of a request target. RFC 9112 §3.2.2: a server must accept the absolute form
 * (`POST http://host/webhooks/r`, sent through forward proxies), which names the same resource.
 */
function originForm(target: string): string {
  const authority = ABSOLUTE_FORM.exec(target);
  if (authority === null) return target;
  const rest = target.slice(authority[0].length);
  return rest.startsWith("/") ? rest : `/${rest}`;
}

/**
 * A request's head from its request line's method and target and its header lines. A target in absolute
 * form names the host the request is for (`targetHost`), which RFC 9112 §3.2.2 has the server take in place
 * of `Host`: who is served `/metrics` is judged by that host, as the request means it.
 */
function headFrom(method: string, target: string, rawHeaders: readonly string[]): RequestHead {
  const headers = headersOf(rawHeaders);
  const authority = ABSOLUTE_FORM.exec(target);
  const url = originForm(target);
  const query = url.indexOf("?");
  const path = query === -1 ? url : url.slice(0, query);
  const named = authority?.[0].replace(/^https?:\/\//i, "") ?? "";
  const targetHost = named.slice(named.lastIndexOf("@") + 1);
  // A target naming no host (`http:///metrics`) leaves Host to say whom the request is for.
  return targetHost === "" ? { method, path, headers } : { method, path, headers, targetHost };
}

/**
 * Close to what the uWS adapter does (uWS's own limits, and its sweep of the bodies still arriving): a
 * request not complete (headers and body) within 10 s of its first byte has its connection closed (here
 * answered 408 first), instead of node's 60 s / 300 s defaults that let a trickling sender hold a
 * connection for minutes; headers up to ~128 KiB are read (uWS's limit; node's default is 16 KiB). uWS
 * counts otherwise: it gives the head its own 10 s and has no hook at a request's first byte, so its
 * adapter counts the body's 10 s from the end of the head, and a slow head then a slow body last ~21 s.
 */
const SLOW_SENDER_LIMITS = {
  requestTimeout: REQUEST_DEADLINE_MS,
  headersTimeout: REQUEST_DEADLINE_MS,
  connectionsCheckingInterval: DEADLINE_CHECK_MS,
  maxHeaderSize: 128 * 1024,
  // An HTTP/1.1 request without Host is refused by svc (`NO_HOST`), in JSON and counted: node's own
  // check writes a bare 400 no one sees in the metrics or the access log.
  requireHostHeader: false,
} as const;

/**
 * The header lines a request may have. node reads 2000 by default and drops the rest without a word, so a
 * request past it was processed without its later headers (an event, a signature, a second Host): it
 * reads one more, and a request that has it is refused 431, as one past the size limit is.
 */
const MAX_HEADER_LINES = 2000;

const REQUEST_TIMEOUT = errorOutcome(408, "Request timeout");
const HEADERS_TOO_LARGE = errorOutcome(431, "Request header fields too large");
/**
 * RFC 9112 §6.3: a request with both `Content-Length` and `Transfer-Encoding` (the classic request
 * smuggling shape). llhttp reports it as a bad Transfer-Encoding or a bad Content-Length depending on
 * which header came first; either way the answer names what is wrong.
 */
export const BOTH_LENGTHS = errorOutcome(400, "Bad request: both Content-Length and Transfer-Encoding");
/** RFC 9112 §3.2: an HTTP/1.1 request must carry Host (an HTTP/1.0 one need not). */
const NO_HOST = errorOutcome(400, "Bad request: an HTTP/1.1 request needs a Host header");
const missingHost = (req: IncomingMessage): boolean =>
  req.httpVersionMinor === 1 && req.httpVersionMajor === 1 && req.headers.host === undefined;
/** An `Expect` whose list holds no member (empty, or only commas and spaces). */
const noExpectation = (expect: string | undefined): boolean =>
  expect === undefined || expect.split(",").every((member) => member.trim() === "");
/** RFC 9110 §10.1.1: an expectation other than `100-continue` cannot be met. */
const EXPECTATION_FAILED = errorOutcome(417, "Expectation failed: only 100-continue is supported");

/** The end of a request line (the line may start with the body of a request pipelined before it). */
const REQUEST_LINE_END = / HTTP\/\d\.\d\r\n/g;

/**
 * The Transfer-Encoding lines of the refused request, from the bytes node hands over (its parser keeps no
 * headers then). Requests pipelined before it may come first: its head is the one whose request line is
 * the last before where the parser stopped (which may be inside that head's last value).
 */
function transferEncodingIn(raw: Buffer | undefined, parsed: number | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const text = raw.toString("latin1");
  let from = 0;
  for (const line of text.matchAll(REQUEST_LINE_END))
    if (line.index <= (parsed ?? text.length)) from = line.index;
  const end = text.indexOf("\r\n\r\n", from);
  const values = text
    .slice(from, end < 0 ? text.length : end)
    .split("\r\n")
    .filter((line) => /^transfer-encoding\s*:/i.test(line))
    .map((line) => line.slice(line.indexOf(":") + 1));
  return values.length === 0 ? undefined : values.join(",");
}

/** A request line whose method and target node's parser reads (a refused line has no head to tell). */
const REQUEST_LINE = /^([A-Z]+) (\S+) HTTP\/\d\.\d\r\n/gm;

/**
 * The head of a request node's parser refused while reading it (two Content-Length, a Transfer-Encoding
 * it cannot frame), from the bytes it hands over, since its parser keeps no headers then: counted,
 * logged and kept in the delivery history under its route, as uWS, which passes such a head on, counts
 * it. Undefined when the parser stopped outside a head whose request line it read (the request line
 * itself refused, bytes after a body): such a refusal is `-` in the access log.
 */
function refusedHead(raw: Buffer | undefined, parsed: number | undefined): RequestHead | undefined {
  if (raw === undefined || parsed === undefined) return undefined;
  const text = raw.toString("latin1");
  let line: RegExpExecArray | undefined;
  for (const match of text.matchAll(REQUEST_LINE)) if (match.index + match[0].length <= parsed) line = match;
  if (line === undefined) return undefined;
  const start = line.index + line[0].length;
  const blank = text.indexOf("\r\n\r\n", start - 2);
  if (blank >= 0 && parsed > blank + 4) return undefined;
  const rawHeaders: string[] = [];
  for (const header of text.slice(start, blank < 0 ? text.length : blank).split("\r\n")) {
    const field = headerField(header);
    if (field !== undefined) rawHeaders.push(field[0], field[1]);
  }
  return headFrom(line[1] as string, line[2] as string, rawHeaders);
}

/** The answer to a request node's parser refused (node would write its own plain one, or none at all). */
export function refusal(
  err: Error & { code?: string; reason?: string; rawPacket?: Buffer; bytesParsed?: number },
): Outcome {
  switch (err.code) {
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return REQUEST_TIMEOUT;
    case "HPE_HEADER_OVERFLOW":
      return HEADERS_TOO_LARGE;
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return PAYLOAD_TOO_LARGE;
    case "HPE_INVALID_TRANSFER_ENCODING":
      if (err.reason?.includes("Content-Length") === true) return BOTH_LENGTHS;
      return chunkedTwice(transferEncodingIn(err.rawPacket, err.bytesParsed))
        ? CHUNKED_TWICE
        : CHUNKED_NOT_LAST;
    case "HPE_INVALID_CONTENT_LENGTH":
      return err.reason?.includes("Transfer-Encoding") === true ? BOTH_LENGTHS : BAD_REQUEST;
    case "HPE_UNEXPECTED_CONTENT_LENGTH":
      return err.reason?.startsWith("Duplicate") === true ? AMBIGUOUS_LENGTH : BAD_REQUEST;
    default:
      return BAD_REQUEST;
  }
}

/**
 * A whole response written straight to the socket (no `ServerResponse` exists for a refused request),
 * with the `Date` a `ServerResponse` (and uWS) writes last: RFC 9110 §6.6.1 asks it of every 4xx. To a
 * `HEAD` request (`head`: the refused head, when its request line was read) it is the head alone, as a
 * `ServerResponse` writes it (RFC 9110 §9.3.2): a body after it would be read as the start of a next answer.
 */
function rawAnswer(answer: Outcome, head?: RequestHead): string {
  const json = answerText(answer);
  const body = head?.method === "HEAD" ? "" : json;
  let own = "";
  for (const [name, value] of Object.entries(answer.headers ?? {})) own += `${name}: ${value}\r\n`;
  return (
    `HTTP/1.1 ${statusLine(answer.status)}\r\nContent-Type: ${contentTypeOf(answer)}\r\n${own}` +
    `Connection: close\r\nContent-Length: ${Buffer.byteLength(json)}\r\nDate: ${new Date().toUTCString()}\r\n\r\n${body}`
  );
}

/** A refusal answered on its response, the connection to end after it. */
function endClosing(res: ServerResponse, answer: Outcome): void {
  const json = answerText(answer);
  res.writeHead(answer.status, {
    "Content-Type": contentTypeOf(answer),
    Connection: "close",
    "Content-Length": Buffer.byteLength(json),
  });
  res.end(json);
}

function headOf(req: IncomingMessage): RequestHead {
  return headFrom((req.method ?? "GET").toUpperCase(), req.url ?? "/", req.rawHeaders);
}

/** The node:http fallback, used when the uWS binary cannot load; it only translates to the shared handler. */
export function listenNode(
  handler: RequestHandler,
  options: ListenOptions & {
    /** The request deadline (default 10 s, as uWS); the tests shorten it. */
    readonly requestTimeoutMs?: number;
  },
): Promise<ServerHandle> {
  /** Each connection's latest response still being written (a parser error after it waits for it). */
  const writing = new WeakMap<Socket, ServerResponse>();
  /** Connections whose parser error is being answered (node reports one per chunk it cannot read). */
  const refused = new WeakSet<Socket>();
  /** Connections whose latest answer says `Connection: close`: nothing may be written after it. */
  const closedAfter = new WeakSet<Socket>();
  /** The head each response's request was handed over with (for counting a parser refusal of its body). */
  const heads = new WeakMap<ServerResponse, RequestHead>();
  /** The stop's end: every answer closes its connection. */
  let ending = false;
  /** Requests handed over and not answered yet (a body still arriving): the stop's end waits for them. */
  let unanswered = 0;
  /**
   * The stop's end closes the idle kept-alive connections once nothing is owed, and only after reading
   * what already reached them: a request still unread in the kernel leaves its connection idle, and
   * closing it then reset it unanswered (node reads one connection at a time: the first answer of a turn
   * closed every other connection with a request waiting).
   */
  const closeIdleWhenNothingOwed = () =>
    void afterArrivedReads().then(() => {
      if (unanswered === 0) server.closeIdleConnections();
    });
  const budget = new BodyBudget();
  // Refused on its head (node's own order: Host before the expectation); its body is never read.
  const refuseHead = (req: IncomingMessage, res: ServerResponse, answer: Outcome) => {
    closedAfter.add(req.socket);
    handler.refused?.(answer, headOf(req));
    endClosing(res, answer);
  };
  const serve = (req: IncomingMessage, res: ServerResponse, expectsContinue: boolean) => {
    // RFC 9112 §9.6: after an answer that closes the connection no further request on it is processed.
    // node's parser reads the requests pipelined behind it all the same: such a one was accepted (a 202
    // no one received, its sender's retry a duplicate). It is let go unanswered; node closes after the
    // answer before it.
    if (closedAfter.has(req.socket)) return;
    writing.set(req.socket, res);
    unanswered += 1;
    /** What the body took of the budget while it is read (given back when read, refused or ended). */
    let taken = 0;
    let takenUnder = 0;
    const giveBack = () => {
      budget.give(taken, takenUnder);
      taken = 0;
    };
    res.once("close", () => {
      if (taken !== 0) giveBack();
      unanswered -= 1;
      // The stop's end closes the idle kept-alive connections only once nothing is owed: until then a
      // request sent on one is answered (503 from the gateway), as on uWS.
      if (ending && unanswered === 0) closeIdleWhenNothingOwed();
    });
    if (missingHost(req)) {
      refuseHead(req, res, NO_HOST);
      return;
    }
    if (req.rawHeaders.length > 2 * MAX_HEADER_LINES) {
      refuseHead(req, res, HEADERS_TOO_LARGE);
      return;
    }
    let finished = false;
    // RFC 9112 §6.1: an HTTP/1.0 message with Transfer-Encoding has faulty framing (an HTTP/1.0 hop in
    // front would read its body otherwise): it is processed, and its connection closed after the answer.
    const faultyFraming = req.httpVersionMinor === 0 && req.headers["transfer-encoding"] !== undefined;
    if (faultyFraming) closedAfter.add(req.socket);
    // Only requests that reach `read` are told to send their body (RFC 9110 §10.1.1): a route or size
    // refusal is answered at once, and a sender waiting for 100 Continue never uploads it.
    let continued = !expectsContinue;
    const head = headOf(req);
    // A request with no body (no Transfer-Encoding, no Content-Length or 0) holds nothing back: it is
    // told to go on at once, as uWS tells every request, so its connection goes on after the answer
    // (node closes one whose 100 Continue was never sent, not knowing whether a body follows).
    if (
      !continued &&
      head.headers["transfer-encoding"] === undefined &&
      (declaredLength(head.headers) ?? 0) === 0
    ) {
      continued = true;
      res.writeContinue();
    }
    heads.set(res, head);
    handler(
      head,
      {
        read(limit, done) {
          // Past the bound, the body is not asked for (no 100 Continue) nor read.
          takenUnder = limit;
          if (!budget.admits(head.headers, limit)) {
            done("busy");
            return;
          }
          if (!continued) {
            continued = true;
            res.writeContinue();
          }
          // A declared body is gathered into one buffer that grows up to its length, as on uWS: both servers
          // count a body that has begun to arrive alike.
          const collector = new BodyCollector(limit, Math.min(declaredLength(head.headers) ?? 0, limit));
          // A body takes the memory it is read into as it arrives: past the bound it is refused (503),
          // and the rest is dropped.
          let over = false;
          req.on("data", (chunk: Buffer) => {
            if (finished || over) return;
            if (!collector.add(chunk)) {
              over = true;
              giveBack();
              done("too_large");
              return;
            }
            const grown = collector.capacity - taken;
            if (grown <= 0) return;
            if (budget.more(grown, limit)) taken += grown;
            else {
              over = true;
              giveBack();
              done("busy");
            }
          });
          req.on("end", () => {
            if (taken !== 0) giveBack();
            if (!finished && !over) done(collector.body());
          });
        },
      },
      (answer, close = false) => {
        if (finished || res.writableEnded) return;
        finished = true;
        const json = answerText(answer);
        // A sender still waiting for 100 Continue has its body unsent: the connection cannot carry
        // another request after this answer.
        const closing = close || !continued || ending || faultyFraming;
        const asked = !res.shouldKeepAlive;
        if (closing || asked) closedAfter.add(req.socket);
        // An HTTP/1.1 connection stays open without a word, as on uWS: node would add
        // `Connection: keep-alive` and `Keep-Alive: timeout=5` to every answer (HTTP/1.0 needs them).
        if (!closing && res.shouldKeepAlive && req.httpVersionMinor === 1) res.removeHeader("Connection");
        // In uWS's order: Content-Type, the answer's own headers, Connection, Content-Length.
        res.writeHead(answer.status, {
          "Content-Type": contentTypeOf(answer),
          ...answer.headers,
          // Also when the request asked for the close: node would append it after Content-Length.
          ...(closing || asked ? { Connection: "close" } : {}),
          "Content-Length": Buffer.byteLength(json),
        });
        // A Transfer-Encoding node's parser refuses leaves nothing after the head to read: the answer
        // goes at once, before the parser's error (see clientError) ends the connection. A declared
        // body far past LINGER_BYTES is not read at all: the connection ends with the answer.
        if (
          !close ||
          req.complete ||
          !continued ||
          chunkedNotLast(head.headers["transfer-encoding"]) ||
          (declaredLength(head.headers) ?? 0) > LINGER_BYTES
        ) {
          res.end(json);
          return;
        }
        // The answer is complete for the sender (Content-Length) but the response is ended only once
        // the rest of the body has been read and dropped: node closes the socket when it ends, and a
        // close with unread bytes resets the connection under a sender still writing.
        res.write(json);
        let dropped = 0;
        req.on("data", (chunk: Buffer) => {
          dropped += chunk.length;
          if (dropped > LINGER_BYTES) req.socket.destroy();
        });
        req.on("end", () => res.end());
        req.resume();
      },
    );
  };
  const deadline = options.requestTimeoutMs;
  const limits =
    deadline === undefined
      ? SLOW_SENDER_LIMITS
      : {
          ...SLOW_SENDER_LIMITS,
          requestTimeout: deadline,
          headersTimeout: deadline,
          connectionsCheckingInterval: Math.min(deadline, SLOW_SENDER_LIMITS.connectionsCheckingInterval),
        };
  const server = createServer(limits, (req, res) => serve(req, res, false));
  server.on("checkContinue", (req, res) => serve(req, res, true));
  server.on("checkExpectation", (req, res) => {
    // An empty Expect lists no expectation (RFC 9110 §5.6.1: empty list members are ignored), so nothing
    // is left unmet: it is served as a request without one, as uWS serves it.
    if (noExpectation(req.headers.expect)) return serve(req, res, false);
    refuseHead(req, res, missingHost(req) ? NO_HOST : EXPECTATION_FAILED);
  });
  // Every answer is JSON, also to a request node's parser refuses (node writes a plain 400, 408 or 431
  // itself, and nothing at all when the error comes after the head was handed over). The answer owed to
  // a complete request on the connection goes out first, then the refusal; the connection then ends.
  server.on(
    "clientError",
    (err: Error & { code?: string; rawPacket?: Buffer; bytesParsed?: number }, socket: Socket) => {
      // A connection that never sent a byte holds no request: at the deadline it is closed, as uWS
      // closes it, with nothing written and nothing counted (node would answer it 408, and the metrics
      // and access log would count a request for every idle connection a proxy's pool or a preconnect
      // keeps open).
      // A client that ended its side (FIN) before its request was whole went away, or half-closed with
      // its request cut short: the request is owed nothing, and nothing is counted or logged, as on uWS,
      // which closes a connection on the client's FIN. Answered, it was a 400 in the metrics, the access
      // log and the route's delivery history for a request no one was there to receive.
      if (
        err.code === "ECONNRESET" ||
        err.code === "HPE_INVALID_EOF_STATE" ||
        !socket.writable ||
        (err.code === "ERR_HTTP_REQUEST_TIMEOUT" && socket.bytesRead === 0)
      ) {
        socket.destroy();
        return;
      }
      if (refused.has(socket)) return;
      refused.add(socket);
      const end = () => socket.destroy();
      const pending = writing.get(socket);
      // An answer that closed the connection was its last: what follows it is not read, nor answered.
      if (closedAfter.has(socket) && (pending === undefined || pending.writableFinished)) {
        end();
        return;
      }
      // The error is in a request of its own (its head), after every earlier one was answered.
      if (pending === undefined || (pending.req.complete && pending.writableFinished)) {
        const answer = refusal(err);
        const head = refusedHead(err.rawPacket, err.bytesParsed);
        handler.refused?.(answer, head);
        socket.end(rawAnswer(answer, head), end);
        return;
      }
      if (!pending.headersSent && !pending.req.complete) {
        // The error is in this request's own body: it is refused, whatever its handler would answer
        // (an answer already given to it, such as an early 400 or 404, stands). The handler's own
        // count of the request is skipped: its reply is never called now.
        const answer = refusal(err);
        handler.refused?.(answer, heads.get(pending));
        endClosing(pending, answer);
        if (pending.writableFinished) end();
        else pending.once("finish", end);
        return;
      }
      if (pending.headersSent && !pending.writableEnded) pending.end();
      // Bytes after a complete body (a Content-Length shorter than what was sent) are a request of their
      // own: the answer still owed to the complete one goes first, then this one's, and the connection
      // ends. An answer that closes the connection itself (an early 404 or 413) is the last one.
      const after = () => {
        if (!pending.req.complete || closedAfter.has(socket) || !socket.writable) {
          end();
          return;
        }
        const answer = refusal(err);
        const head = refusedHead(err.rawPacket, err.bytesParsed);
        handler.refused?.(answer, head);
        socket.end(rawAnswer(answer, head), end);
      };
      if (pending.writableFinished) after();
      else pending.once("finish", after);
    },
  );
  // A CONNECT request is handed over as a tunnel, not a request: with no listener node closes it with no
  // answer. It is answered as uWS answers it (405 on a route or /health, 404 elsewhere), then closed.
  server.on("connect", (req: IncomingMessage, socket: Socket) => {
    socket.on("error", () => socket.destroy());
    handler(headOf(req), { read: (_limit, done) => done(Buffer.alloc(0)) }, (answer) =>
      socket.end(rawAnswer(answer), () => socket.destroy()),
    );
  });
  server.keepAliveTimeout = 5000;
  server.maxHeadersCount = MAX_HEADER_LINES + 1;
  return new Promise((resolve, reject) => {
    server.once("error", (err) => reject(bindFailure(options.host, options.port, err)));
    // Node's default backlog (511) drops connects in a burst of thousands and the senders retry after 1 s,
    // 3 s, ...: a 5,000-connection burst took 14 s to be answered, 6.6 s with 4096 (capped by somaxconn).
    server.listen({ port: options.port, host: options.host, backlog: 4096 }, () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : options.port;
      // Taken from the start: with no connection open, 'close' comes as soon as the listener closes
      // (closeIntake), long before `ended` is awaited; waiting for it there never ended, the stop's
      // later steps (journals, history, actors) never ran and the process left with exit code 13.
      const closed = new Promise<void>((resolve) => server.once("close", () => resolve()));
      resolve({
        impl: "node",
        host: options.host,
        port,
        close() {
          // The listening socket only: http's own close also ends the idle keep-alive connections, and
          // a request a sender writes on one meanwhile would find it reset instead of answered 503.
          Server.prototype.close.call(server);
        },
        async ended() {
          ending = true;
          if (server.listening) Server.prototype.close.call(server);
          if (unanswered === 0) closeIdleWhenNothingOwed();
          const grace = setTimeout(() => server.closeAllConnections(), STOP_GRACE_MS);
          await closed;
          clearTimeout(grace);
        },
      });
    });
  });
}
