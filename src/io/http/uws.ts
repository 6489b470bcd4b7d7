import type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from "uWebSockets.js";
import { type Clock, systemClock } from "../../clock.js";
import { declaredLength } from "../../streams/stages/size.js";
import type { Outcome } from "../../streams/types.js";
import { importExternal } from "../importExternal.js";
import { afterArrivedReads } from "./arrivedReads.js";
import {
  addHeaderLine,
  answerText,
  BodyBudget,
  BodyCollector,
  type BodyRead,
  type BodySource,
  contentTypeOf,
  FRAMING_REFUSALS,
  LINGER_BYTES,
  type Reply,
  type RequestHead,
  statusLine,
} from "./core.js";
import {
  DEADLINE_CHECK_MS,
  type ListenOptions,
  REQUEST_DEADLINE_MS,
  type ServerHandle,
  STOP_GRACE_MS,
} from "./listen.js";
import { listenAddress } from "./listenHint.js";

type Uws = typeof import("uWebSockets.js");

/** uWS's listen option for a port no other socket may share (exported by the binary, not in its types). */
const LIBUS_LISTEN_EXCLUSIVE_PORT = 1;

/** Loads the native uWS binary; `undefined` with the reason when it cannot load on this platform. */
export async function loadUws(): Promise<{ uws: Uws } | { error: string }> {
  try {
    const mod = await importExternal<Uws & { default?: Uws }>("uWebSockets.js");
    return { uws: mod.default ?? mod };
  } catch (err) {
    return { error: err instanceof Error ? (err.message.split("\n")[0] ?? String(err)) : String(err) };
  }
}

const CONNECTION_CLOSE = { Connection: "close" } as const;
/** A chunked sender silent this long after its body passed the limit is answered (and closed). */
const LINGER_IDLE_MS = 1000;
/** At most this long is a chunked body past the limit read and dropped before its answer. */
const LINGER_MS = 5000;

/** The answer `res.cork` is writing (cork runs its callback at once; one shared callback, no closure). */
let corking:
  | {
      res: HttpResponse;
      status: number;
      headers: Readonly<Record<string, string>> | undefined;
      json: string;
      contentType: string;
      close: boolean;
      head: boolean;
    }
  | undefined;

function writeCorked(): void {
  const { res, status, headers, json, contentType, close, head } = corking as NonNullable<typeof corking>;
  res.writeStatus(statusLine(status)).writeHeader("Content-Type", contentType);
  if (headers !== undefined) for (const name in headers) res.writeHeader(name, headers[name] as string);
  // A HEAD answer reports the length its GET would have, and carries no body. The length is written
  // here: given one, uWS (20.30) leaves the response unfinished and ignores any close, the request's
  // `Connection: close` included, so the connection stayed open. Without one it writes no length,
  // finishes the response and closes after it when the request said so (it cannot close on its own).
  if (head) {
    res.writeHeader("Content-Length", String(Buffer.byteLength(json)));
    res.endWithoutBody();
  } else if (close) res.end(json, true);
  // uWS keeps whatever of an answer the socket cannot take, and goes on reading the requests after it: a
  // client that pipelines requests and never reads the answers grew the gateway's memory without bound
  // (~260 MB in 30 s). Once the socket takes no more, such a client is closed.
  else if (!res.tryEnd(json, Buffer.byteLength(json))[0]) res.close();
}

/**
 * Sent at once, inside the handler when the pipeline answers synchronously: uWS serves pipelined
 * requests (a second request in the same read) only when each answer is complete before the next
 * request is parsed; an answer still pending then closes the connection. Holding answers to the end of
 * the event-loop turn saved ~4 µs of kernel time per request under wrk (fewer client wake-ups) but
 * broke pipelining, so it was taken out (bench/README.md).
 */
function send(
  res: HttpResponse,
  outcome: Outcome,
  close: boolean,
  head: boolean,
  extraHeaders?: Readonly<Record<string, string>>,
): void {
  corking = {
    res,
    status: outcome.status,
    headers: extraHeaders === undefined ? outcome.headers : { ...outcome.headers, ...extraHeaders },
    json: answerText(outcome),
    contentType: contentTypeOf(outcome),
    close,
    head,
  };
  try {
    res.cork(writeCorked);
  } finally {
    corking = undefined;
  }
}

/**
 * uWS closes after the answer on its own, and says nothing: its own test is a value of five characters
 * (`close`) on the first `Connection` line. The joined value cannot tell `close` then `TE` on two lines
 * (which uWS closes after) from `close, TE` on one (which it does not), so the first line is asked.
 */
function closesAfter(req: HttpRequest): boolean {
  return req.getHeader("connection").length === 5;
}

/**
 * An `Expect: 100-continue` written in another case (`100-Continue`, as Java's HttpClient writes it): uWS
 * answers `100 Continue` only to the value in lower case, so such a sender holds its body back.
 */
function awaitsUnsentContinue(expect: string | undefined): boolean {
  return expect !== undefined && expect !== "100-continue" && expect.trim().toLowerCase() === "100-continue";
}

/**
 * `close` among other connection options (`Connection: TE, close`, as Perl's LWP sends it). RFC 9112
 * §9.6: the server must close after its answer; uWS acts only on a value of five characters, so it kept
 * such a connection open and said nothing. Only a list (a comma) is looked into.
 */
export function closeListed(connection: string | undefined): boolean {
  if (connection === undefined || !connection.includes(",")) return false;
  for (const option of connection.split(",")) if (option.trim().toLowerCase() === "close") return true;
  return false;
}

/** What `onData` does with the chunks: nothing, collect the body, or drop the rest after an early answer. */
enum Reading {
  Drop,
  Collect,
  Linger,
}

/** A request's body as uWS reads it, and word of its client going away before the answer. */
export interface UwsBodySource extends BodySource {
  /**
   * Called once if the connection closes before the request is answered (the body may be partly read):
   * no answer will reach the client, and `read`'s callback is never called.
   */
  onAborted(listener: () => void): void;
}

/** The request handler the uWS adapter serves; a plain `RequestHandler` is one that ignores aborts. */
export type UwsRequestHandler = (head: RequestHead, body: UwsBodySource, reply: Reply) => void;

/**
 * The requests taken in and not yet answered or aborted (a body still arriving, an answer owed): a stop's
 * end waits for them, as node:http's does for its active connections, instead of closing them unanswered.
 */
interface Unanswered {
  count: number;
  /** Set while a stop's end waits: called when `count` comes to 0. */
  drained: (() => void) | undefined;
  /**
   * The stop's end has begun: every answer closes its connection and says so (`Connection: close`), as
   * node:http's do then, instead of leaving it to look kept alive until `closeAll` cuts it.
   */
  ending: boolean;
}

/**
 * The bodies still arriving after their first chunk, and the one sweep that closes those past the request
 * deadline. uWS's own timeout (10 s) starts again each time 160 KiB more of a body have come (its floor of
 * 16 KiB/s), so only a slower sender met it: one writing 20,000 bytes every 500 ms was answered 202 at
 * +26.6 s, and 80 such senders held the bound on the bodies buffered at once (BodyBudget) well past the
 * deadline, every other request with a body answered 503 meanwhile. A body that comes whole in its first
 * chunk (most) never joins: no timer, no entry per request; the sweep runs only while a body is arriving.
 */
class ArrivingBodies {
  private readonly exchanges = new Set<UwsExchange>();
  private sweep: unknown;
  constructor(private readonly clock: Clock) {}

  add(exchange: UwsExchange): void {
    this.exchanges.add(exchange);
    if (this.sweep === undefined) this.arm();
  }

  delete(exchange: UwsExchange): void {
    this.exchanges.delete(exchange);
  }

  private arm(): void {
    this.sweep = this.clock.setTimeout(this.check, DEADLINE_CHECK_MS);
    // The real clock's timer must not keep a process alive that has nothing else to do.
    (this.sweep as { unref?: () => void } | undefined)?.unref?.();
  }

  /** Closes the bodies past the deadline; looks again later while any is still arriving. */
  private readonly check = (): void => {
    this.sweep = undefined;
    const now = this.clock.elapsed();
    // An exchange that expires leaves the set (`abort`): a Set's iteration allows that. One in the set
    // has its `since`.
    for (const exchange of this.exchanges)
      if (now - (exchange.since as number) >= REQUEST_DEADLINE_MS) exchange.expire();
    if (this.exchanges.size > 0) this.arm();
  };
}

/**
 * One request on uWS: its state and the `BodySource` the shared handler reads. A class, so a request
 * costs one object and three callbacks uWS needs (abort, data, reply) instead of a closure per step.
 */
class UwsExchange implements UwsBodySource {
  finished = false;
  private aborted: (() => void) | undefined;
  private reading = Reading.Drop;
  private listening = false;
  private bodyRead = false;
  private received = 0;
  private collector: BodyCollector | undefined;
  /** What the body took of the server's `BodyBudget` while it is read, and under which limit. */
  private taken = 0;
  private takenUnder = 0;
  private done: ((body: BodyRead) => void) | undefined;
  /**
   * When its head came (`Clock.elapsed`), once its body is known not to come whole in its first chunk: set
   * from the head for a chunked body (its first chunk may come later), else when the first chunk comes,
   * which uWS hands over with the head (empty when the head came alone).
   */
  since: number | undefined;
  /** Among the ArrivingBodies the deadline sweep looks at. */
  private arriving = false;
  private lingering: { outcome: Outcome; started: number; dropped: number; idle?: unknown } | undefined;

  constructor(
    private readonly res: HttpResponse,
    readonly head: RequestHead,
    private readonly clock: Clock,
    private readonly unanswered: Unanswered,
    /** uWS closes the connection after the answer by itself (`closesAfter`). */
    private readonly closesItself: boolean,
    private readonly budget: BodyBudget,
    private readonly arrivals: ArrivingBodies,
  ) {
    unanswered.count++;
  }

  /** The request is done (answered or aborted), once: a stop's end may close the connections now. */
  private settle(): void {
    if (--this.unanswered.count === 0) this.unanswered.drained?.();
  }

  /** The body is read, refused or not wanted: what it took of the budget is free again. */
  private giveBack(): void {
    this.budget.give(this.taken, this.takenUnder);
    this.taken = 0;
  }

  /** The body is in, refused or let go: the deadline sweep no longer looks at it. */
  private arrived(): void {
    this.arriving = false;
    this.arrivals.delete(this);
  }

  /**
   * Past the request deadline with its body still arriving: the connection is closed with no answer, as
   * uWS closes one that stalls, and as when the client goes away (`abort`, which uWS calls from `close`):
   * what the body took of the budget is free again, and nothing is counted or logged.
   */
  expire(): void {
    this.res.close();
    // Once more in case uWS did not call it: `abort` does its part once.
    this.abort();
  }

  /** A body being collected is not wanted (the request was answered): what was read of it is let go. */
  private dropBody(): void {
    if (this.arriving) this.arrived();
    this.reading = Reading.Drop;
    this.collector = undefined;
    this.done = undefined;
    if (this.taken !== 0) this.giveBack();
  }

  onAborted(listener: () => void): void {
    this.aborted = listener;
  }

  /** uWS's onAborted: the connection is gone; the body read so far and the reader are let go. */
  abort(): void {
    const unanswered = !this.finished;
    this.finished = true;
    if (unanswered) this.settle();
    if (this.arriving) this.arrived();
    this.reading = Reading.Drop;
    this.collector = undefined;
    this.done = undefined;
    if (this.taken !== 0) this.giveBack();
    if (this.lingering !== undefined) this.clock.clearTimeout(this.lingering.idle);
    if (unanswered) this.aborted?.();
  }

  read(limit: number, done: (body: BodyRead) => void): void {
    if (!this.budget.admits(this.head.headers, limit)) {
      // Not read: its bytes are counted and dropped until the answer (`reply`) decides the rest.
      this.listen();
      done("busy");
      return;
    }
    this.takenUnder = limit;
    const declared = declaredLength(this.head.headers);
    // A chunked body's first chunk need not come with its head: its deadline counts from the head.
    if (declared === undefined && this.head.headers["transfer-encoding"] !== undefined)
      this.since = this.clock.elapsed();
    // A declared body is gathered into one buffer that grows up to its length (at most the limit).
    this.collector = new BodyCollector(limit, Math.min(declared ?? 0, limit));
    this.done = done;
    this.reading = Reading.Collect;
    this.listen();
  }

  /** One onData per request, registered before the answer (uWS forbids touching `res` after it). */
  private listen(): void {
    if (this.listening) return;
    this.listening = true;
    this.res.onData((chunk, isLast) => this.chunk(chunk, isLast));
  }

  private chunk(chunk: ArrayBuffer, isLast: boolean): void {
    this.received += chunk.byteLength;
    if (isLast) this.bodyRead = true;
    if (this.reading === Reading.Collect) {
      if (this.finished) return;
      // uWS reuses the ArrayBuffer after this callback returns: lent, so the collector copies what it keeps.
      const collector = this.collector as BodyCollector;
      if (!collector.add(Buffer.from(chunk), true)) {
        if (this.arriving) this.arrived();
        this.reading = Reading.Drop;
        this.giveBack();
        this.done?.("too_large");
        return;
      }
      // A body takes the memory it is read into as it arrives: past what the server may buffer, it is
      // refused (503), and the rest is dropped.
      const grown = collector.capacity - this.taken;
      if (grown > 0 && !this.budget.more(grown, this.takenUnder)) {
        if (this.arriving) this.arrived();
        this.reading = Reading.Drop;
        this.giveBack();
        this.done?.("busy");
      } else {
        if (grown > 0) this.taken += grown;
        if (isLast) {
          if (this.arriving) this.arrived();
          this.reading = Reading.Drop;
          if (this.taken !== 0) this.giveBack();
          this.done?.((this.collector as BodyCollector).body());
        } else if (!this.arriving) {
          // Not whole in its first chunk: the deadline sweep looks at it until it is in.
          this.arriving = true;
          this.since ??= this.clock.elapsed();
          this.arrivals.add(this);
        }
      }
    } else if (this.reading === Reading.Linger) {
      const linger = this.lingering as NonNullable<typeof this.lingering>;
      linger.dropped += chunk.byteLength;
      if (this.finished) this.clock.clearTimeout(linger.idle);
      else if (isLast || linger.dropped > LINGER_BYTES || this.clock.elapsed() - linger.started > LINGER_MS) {
        this.finishLinger();
      } else this.waitLinger();
    }
  }

  /**
   * An early answer (`close`) is the same whether the body is still unread (on one thread, where it is
   * decided while the head is read) or already read (an ingress thread reads every body at once).
   */
  reply(outcome: Outcome, close: boolean): void {
    if (this.finished) return;
    // A body still being collected (an ingress thread reads each at once) is not wanted once the request
    // is answered (an early answer, a 405 to a GET with a body): what was read of it is let go now, not
    // held until its connection closes.
    if (this.reading === Reading.Collect) this.dropBody();
    // uWS goes on parsing the rest of the read after an answer, even one it closes after: bytes sent behind
    // a request whose framing is in doubt were served as a request of their own (a proxy in front that
    // framed it otherwise would have passed them on as its body). Answered once this read is parsed: a
    // request parsed while an answer is owed makes uWS close the connection, serving nothing after it.
    if (close && FRAMING_REFUSALS.has(outcome)) {
      setImmediate(() => {
        if (!this.finished) this.answer(outcome, true);
      });
      return;
    }
    // uWS (20.30) misreads the bytes after a chunked body that ends in trailer fields: a next request on
    // the connection was never answered. Every answer to a chunked request closes its connection (once
    // the body is read, as any closing answer), so no request is ever read after one.
    if (!close && this.head.headers["transfer-encoding"] === undefined) {
      this.answer(outcome, false);
      return;
    }
    const declared = declaredLength(this.head.headers);
    if (declared === undefined) {
      if (this.bodyRead) this.answer(outcome, true);
      else this.linger(outcome);
    }
    // One far past LINGER_BYTES is cut at once.
    else if (!this.bodyRead && declared - this.received > LINGER_BYTES) this.answer(outcome, true);
    // The request said `Connection: close`: uWS closes right after any answer, so one written now would
    // close with the declared body still arriving and reset the connection (urllib, Ruby's Net::HTTP:
    // EPIPE instead of the 413). The rest is read and dropped first, as a chunked body's is, unless the
    // sender waits for a 100 Continue uWS did not send (it sends none to `100-Continue`): no body is coming.
    else if (
      !this.bodyRead &&
      this.closesItself &&
      declared > this.received &&
      !awaitsUnsentContinue(this.head.headers.expect)
    )
      this.linger(outcome);
    else {
      // Answered now; uWS then reads (and drops) the rest of the declared body itself and keeps the
      // connection, as for a client that ignores `Connection: close`.
      if (!this.bodyRead) {
        this.reading = Reading.Drop;
        this.listen();
      }
      this.answer(outcome, false, CONNECTION_CLOSE);
    }
  }

  private answer(outcome: Outcome, close: boolean, extraHeaders?: Readonly<Record<string, string>>): void {
    this.finished = true;
    this.write(outcome, close, extraHeaders);
    // Once written: closing the connections before would lose this answer.
    this.settle();
  }

  private write(outcome: Outcome, close: boolean, extraHeaders?: Readonly<Record<string, string>>): void {
    // uWS adds `Connection: close` to an answer it closes after, except when the request said
    // `Connection: close` itself (RFC 9112 §9.6: the answer should say it too, as node:http's does), and
    // to no HEAD answer; the answer carries it then.
    const head = this.head.method === "HEAD";
    // `close` in a list: uWS closes (and says so itself) only when told to. Not after an early answer
    // whose body is still coming (`extraHeaders`), nor after a HEAD answer, which uWS cannot close.
    if (
      !close &&
      extraHeaders === undefined &&
      !this.closesItself &&
      closeListed(this.head.headers.connection)
    ) {
      if (head) send(this.res, outcome, false, true, CONNECTION_CLOSE);
      else send(this.res, outcome, true, false);
      return;
    }
    const headers = (close && head) || this.closesItself ? CONNECTION_CLOSE : extraHeaders;
    send(this.res, outcome, close, head, headers);
  }

  /**
   * A chunked body has no end uWS would stop at, uWS allows no close after an answer, and it closes
   * after any answer to a request that said `Connection: close`: the rest is read and dropped first,
   * and the answer (which closes) is written when the body ends, when the sender pauses (it may be
   * waiting for the answer; its close then loses nothing), or once LINGER_BYTES or LINGER_MS are passed.
   */
  private linger(outcome: Outcome): void {
    this.lingering = { outcome, started: this.clock.elapsed(), dropped: 0 };
    this.reading = Reading.Linger;
    this.listen();
    this.waitLinger();
  }

  private waitLinger(): void {
    const linger = this.lingering as NonNullable<typeof this.lingering>;
    this.clock.clearTimeout(linger.idle);
    linger.idle = this.clock.setTimeout(() => this.finishLinger(), LINGER_IDLE_MS);
  }

  private finishLinger(): void {
    const linger = this.lingering as NonNullable<typeof this.lingering>;
    this.clock.clearTimeout(linger.idle);
    if (!this.finished) this.answer(linger.outcome, true);
  }
}

/** Headers of the request being copied (`req.forEach` calls back synchronously: one shared callback). */
let copying: Record<string, string> = {};

function copyHeader(key: string, value: string): void {
  addHeaderLine(copying, key, value);
}

/** A uWS listener; `closeAll` also closes the open connections (an ingress thread's end). */
export interface UwsServerHandle extends ServerHandle {
  closeAll(): void;
}

/** The uWS adapter: copies the request synchronously, then only translates to the shared handler. */
export function listenUws(
  uws: Uws,
  handler: UwsRequestHandler,
  options: ListenOptions & {
    /** How many servers share the bound on the bodies buffered at once (the ingress threads). */
    readonly bodyShares?: number;
  },
): Promise<UwsServerHandle> {
  const app: TemplatedApp = uws.App();
  const clock = options.clock ?? systemClock;
  const unanswered: Unanswered = { count: 0, drained: undefined, ending: false };
  const budget = new BodyBudget(options.bodyShares);
  const arrivals = new ArrivingBodies(clock);
  app.any("/*", (res, req) => {
    const headers: Record<string, string> = {};
    copying = headers;
    req.forEach(copyHeader);
    const exchange = new UwsExchange(
      res,
      {
        method: req.getCaseSensitiveMethod().toUpperCase(),
        path: req.getUrl(),
        query: req.getQuery(),
        headers,
      },
      clock,
      unanswered,
      headers.connection !== undefined && closesAfter(req),
      budget,
      arrivals,
    );
    res.onAborted(() => exchange.abort());
    handler(exchange.head, exchange, (outcome, close = false) =>
      exchange.reply(outcome, close || unanswered.ending),
    );
  });
  return new Promise((resolve, reject) => {
    // uWS binds with SO_REUSEPORT unless told otherwise: a second gateway (or a leftover one) on the same
    // port would start without an error and the kernel would split the senders' requests between them.
    const listen = app.listen as unknown as (
      host: string,
      port: number,
      options: number,
      cb: (socket: us_listen_socket | false) => void,
    ) => TemplatedApp;
    const flags = options.sharedPort === true ? 0 : LIBUS_LISTEN_EXCLUSIVE_PORT;
    listen.call(app, options.host, options.port, flags, (socket) => {
      if (!socket) {
        reject(new Error(`cannot listen on ${listenAddress(options.host, options.port)}`));
        return;
      }
      let open = true;
      const close = () => {
        if (!open) return;
        open = false;
        uws.us_listen_socket_close(socket);
      };
      const closeAll = () => (app as TemplatedApp & { close(): void }).close();
      resolve({
        impl: "uws",
        host: options.host,
        port: uws.us_socket_local_port(socket),
        close,
        // The open connections too: an ingress thread lets go of everything when it ends.
        closeAll,
        // A stop's end: the requests taken in and not answered yet (a body still arriving, a lingering
        // 413) are answered first (at most STOP_GRACE_MS), then every connection closes. Before, the
        // process left at once and such a request's connection was reset unanswered (node:http and the
        // ingress threads answered it 503).
        async ended() {
          close();
          unanswered.ending = true;
          let graceOver = false;
          const grace = setTimeout(() => {
            graceOver = true;
            unanswered.drained?.();
          }, STOP_GRACE_MS);
          // A request already on an open connection, still unread (the stop's steps may have given the
          // event loop no turn), is read and answered too before they close; so are those that reach one
          // while the last answers are written. The turns also let uWS flush the last answer written.
          await afterArrivedReads();
          while (unanswered.count > 0 && !graceOver) {
            await new Promise<void>((resolve) => {
              unanswered.drained = resolve;
            });
            unanswered.drained = undefined;
            await afterArrivedReads();
          }
          clearTimeout(grace);
          closeAll();
        },
      });
    });
  });
}
