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
        send({
          res,
          status: outcome.status,
          headers: outcome.headers,
          json: JSON.stringify(outcome.body),
          close,
          head: head.method === "HEAD",
        });
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
