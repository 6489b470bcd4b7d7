import type { HttpResponse, TemplatedApp, us_listen_socket } from "uWebSockets.js";
import { BodyCollector, type RequestHandler, statusLine } from "./core.js";
import type { ListenOptions, ServerHandle } from "./server.js";

type Uws = typeof import("uWebSockets.js");

/** Loads the native uWS binary; `undefined` with the reason when it cannot load on this platform. */
export async function loadUws(): Promise<{ uws: Uws } | { error: string }> {
  try {
    const mod = (await import("uWebSockets.js")) as Uws & { default?: Uws };
    return { uws: mod.default ?? mod };
  } catch (err) {
    return { error: err instanceof Error ? (err.message.split("\n")[0] ?? String(err)) : String(err) };
  }
}

interface Answer {
  readonly res: HttpResponse;
  readonly status: number;
  readonly headers: Readonly<Record<string, string>> | undefined;
  readonly json: string;
  readonly close: boolean;
  readonly head: boolean;
  /** Set by `onAborted`: the response object must not be touched any more. */
  aborted: boolean;
}

/**
 * Answers given during one turn of the event loop go out together at its end (`setImmediate`).
 * Every answer sent from inside a uWS callback is a `sendto` that wakes the client's event loop; on a
 * busy gateway, answering between requests instead of after the turn's batch measured ~4 µs of extra
 * kernel time per request (cross-CPU wake-ups), a fifth of the accepted path (bench/README.md).
 */
function createOutbox(): (answer: Answer) => void {
  let queued: Answer[] = [];
  const flush = (): void => {
    const batch = queued;
    queued = [];
    for (const answer of batch) if (!answer.aborted) send(answer);
  };
  return (answer) => {
    if (queued.length === 0) setImmediate(flush);
    queued.push(answer);
  };
}

function send({ res, status, headers, json, close, head }: Answer): void {
  res.cork(() => {
    res.writeStatus(statusLine(status)).writeHeader("Content-Type", "application/json");
    if (headers !== undefined) for (const name in headers) res.writeHeader(name, headers[name] as string);
    // A HEAD answer reports the length its GET would have, and carries no body.
    if (head) res.endWithoutBody(Buffer.byteLength(json), close);
    else res.end(json, close);
  });
}

/** The uWS adapter: copies the request synchronously, then only translates to the shared handler. */
export function listenUws(uws: Uws, handler: RequestHandler, options: ListenOptions): Promise<ServerHandle> {
  const app: TemplatedApp = uws.App();
  const post = createOutbox();
  app.any("/*", (res, req) => {
    let finished = false;
    let answer: Answer | undefined;
    res.onAborted(() => {
      finished = true;
      if (answer !== undefined) answer.aborted = true;
    });
    const headers: Record<string, string> = {};
    req.forEach((key, value) => {
      const seen = headers[key];
      headers[key] = seen === undefined ? value : `${seen}, ${value}`;
    });
    const head = { method: req.getCaseSensitiveMethod().toUpperCase(), path: req.getUrl(), headers };
    handler(
      head,
      {
        read(limit, done) {
          const collector = new BodyCollector(limit);
          let stopped = false;
          res.onData((chunk, isLast) => {
            if (stopped || finished) return;
            // uWS reuses the ArrayBuffer after this callback returns: copy it.
            if (!collector.add(Buffer.from(Buffer.from(chunk)))) {
              stopped = true;
              done("too_large");
            } else if (isLast) {
              stopped = true;
              done(collector.body());
            }
          });
        },
      },
      (outcome, close = false) => {
        if (finished) return;
        finished = true;
        answer = {
          res,
          status: outcome.status,
          headers: outcome.headers,
          json: JSON.stringify(outcome.body),
          close,
          head: head.method === "HEAD",
          aborted: false,
        };
        post(answer);
      },
    );
  });
  return new Promise((resolve, reject) => {
    app.listen(options.host, options.port, (socket: us_listen_socket | false) => {
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
