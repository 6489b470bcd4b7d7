import type { HttpResponse, TemplatedApp, us_listen_socket } from "uWebSockets.js";
import { declaredLength } from "../../streams/stages/size.js";
import type { Outcome } from "../../streams/types.js";
import { BodyCollector, LINGER_BYTES, type RequestHandler, statusLine } from "./core.js";
import type { ListenOptions, ServerHandle } from "./server.js";

type Uws = typeof import("uWebSockets.js");

/** uWS's listen option for a port no other socket may share (exported by the binary, not in its types). */
const LIBUS_LISTEN_EXCLUSIVE_PORT = 1;

/** Loads the native uWS binary; `undefined` with the reason when it cannot load on this platform. */
export async function loadUws(): Promise<{ uws: Uws } | { error: string }> {
  try {
    const mod = (await import("uWebSockets.js")) as Uws & { default?: Uws };
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

interface Answer {
  readonly res: HttpResponse;
  readonly status: number;
  readonly headers: Readonly<Record<string, string>> | undefined;
  readonly json: string;
  readonly close: boolean;
  readonly head: boolean;
}

/**
 * Sent at once, inside the handler when the pipeline answers synchronously: uWS serves pipelined
 * requests (a second request in the same read) only when each answer is complete before the next
 * request is parsed; an answer still pending then closes the connection. Holding answers to the end of
 * the event-loop turn saved ~4 µs of kernel time per request under wrk (fewer client wake-ups) but
 * broke pipelining, so it was taken out (bench/README.md).
 */
function send({ res, status, headers, json, close, head }: Answer): void {
  res.cork(() => {
    res.writeStatus(statusLine(status)).writeHeader("Content-Type", "application/json");
    if (headers !== undefined) for (const name in headers) res.writeHeader(name, headers[name] as string);
    // A HEAD answer reports the length its GET would have, and carries no body.
    if (head) res.endWithoutBody(Buffer.byteLength(json), close);
    else res.end(json, close);
  });
}

type Chunk = (chunk: ArrayBuffer, isLast: boolean) => void;
const DROP: Chunk = () => {};

/** The uWS adapter: copies the request synchronously, then only translates to the shared handler. */
export function listenUws(uws: Uws, handler: RequestHandler, options: ListenOptions): Promise<ServerHandle> {
  const app: TemplatedApp = uws.App();
  app.any("/*", (res, req) => {
    let finished = false;
    res.onAborted(() => {
      finished = true;
    });
    const headers: Record<string, string> = {};
    req.forEach((key, value) => {
      const seen = headers[key];
      headers[key] = seen === undefined ? value : `${seen}, ${value}`;
    });
    const head = { method: req.getCaseSensitiveMethod().toUpperCase(), path: req.getUrl(), headers };
    // One onData per request, registered before the answer (uWS forbids touching `res` after it):
    // chunks go to `onChunk`, which collects, then drops what is left after an early answer.
    let onChunk: Chunk = DROP;
    let listening = false;
    let bodyRead = false;
    let received = 0;
    const listen = () => {
      if (listening) return;
      listening = true;
      res.onData((chunk, isLast) => {
        received += chunk.byteLength;
        if (isLast) bodyRead = true;
        onChunk(chunk, isLast);
      });
    };
    const answer = (outcome: Outcome, close: boolean, extraHeaders?: Record<string, string>) => {
      finished = true;
      send({
        res,
        status: outcome.status,
        headers: extraHeaders === undefined ? outcome.headers : { ...outcome.headers, ...extraHeaders },
        json: JSON.stringify(outcome.body),
        close,
        head: head.method === "HEAD",
      });
    };
    handler(
      head,
      {
        read(limit, done) {
          const collector = new BodyCollector(limit);
          onChunk = (chunk, isLast) => {
            if (finished) return;
            // uWS reuses the ArrayBuffer after this callback returns: copy it.
            if (!collector.add(Buffer.from(Buffer.from(chunk)))) {
              onChunk = DROP;
              done("too_large");
            } else if (isLast) {
              onChunk = DROP;
              done(collector.body());
            }
          };
          listen();
        },
      },
      (outcome, close = false) => {
        if (finished) return;
        if (!close || bodyRead) return answer(outcome, close);
        const declared = declaredLength(headers);
        if (declared !== undefined) {
          // Answered now; uWS then reads (and drops) the rest of the declared body itself before the
          // connection goes idle. One far past LINGER_BYTES is cut at once.
          if (declared - received > LINGER_BYTES) return answer(outcome, true);
          onChunk = DROP;
          listen();
          return answer(outcome, false, CONNECTION_CLOSE);
        }
        lingerChunked(outcome);
      },
    );
    /**
     * A chunked body has no end uWS would stop at, and uWS allows no close after an answer: the rest is
     * read and dropped first, and the answer (which closes) is written when the body ends, when the
     * sender pauses (it may be waiting for the answer; its close then loses nothing), or once
     * LINGER_BYTES or LINGER_MS are passed.
     */
    function lingerChunked(outcome: Outcome): void {
      const started = Date.now();
      let dropped = 0;
      let idle: NodeJS.Timeout | undefined;
      const finish = () => {
        clearTimeout(idle);
        if (!finished) answer(outcome, true);
      };
      const wait = () => {
        clearTimeout(idle);
        idle = setTimeout(finish, LINGER_IDLE_MS);
      };
      onChunk = (chunk, isLast) => {
        dropped += chunk.byteLength;
        if (finished) clearTimeout(idle);
        else if (isLast || dropped > LINGER_BYTES || Date.now() - started > LINGER_MS) finish();
        else wait();
      };
      listen();
      wait();
    }
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
    listen.call(app, options.host, options.port, LIBUS_LISTEN_EXCLUSIVE_PORT, (socket) => {
      if (!socket) {
        reject(new Error(`cannot listen on ${options.host}:${options.port}`));
        return;
      }
      let open = true;
      resolve({
        impl: "uws",
        host: options.host,
        port: uws.us_socket_local_port(socket),
        close() {
          if (!open) return;
          open = false;
          uws.us_listen_socket_close(socket);
        },
      });
    });
  });
}
