import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import {
  addHeaderLine,
  answerText,
  BodyCollector,
  contentTypeOf,
  LINGER_BYTES,
  type RequestHandler,
} from "./core.js";
import type { ListenOptions, ServerHandle } from "./listen.js";

const NON_ASCII = /[\u0080-\uffff]/;
/**
 * Bytes uWS drops at either end of a header value: its parser trims every byte below 33 compared as a
 * signed char, which takes 0x80-0xFF along with the whitespace. uWS exposes no raw header bytes, so
 * the node server drops the same bytes: `X-Gitlab-Token: <secret>é` or a delivery ID `\xffid` must read
 * the same on both servers (node reads header bytes as Latin-1: one character per byte here).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control bytes are among those uWS drops
const UWS_EDGE_BYTES = /^[\u0000-\u0020\u0080-\u00ff]+|[\u0000-\u0020\u0080-\u00ff]+$/g;

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
      ? Buffer.from(value.replace(UWS_EDGE_BYTES, ""), "latin1").toString("utf8")
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
 * What uWS does on its own, so both servers treat slow senders and big headers alike: a request not
 * complete (headers and body) within 10 s is answered 408 and its connection closed, instead of node's
 * 60 s / 300 s defaults that let a trickling sender hold a connection for minutes; headers up to
 * ~128 KiB are read (uWS's limit; node's default is 16 KiB).
 */
const SLOW_SENDER_LIMITS = {
  requestTimeout: 10_000,
  headersTimeout: 10_000,
  connectionsCheckingInterval: 1_000,
  maxHeaderSize: 128 * 1024,
} as const;

/** The node:http fallback, used when the uWS binary cannot load; it only translates to the shared handler. */
export function listenNode(handler: RequestHandler, options: ListenOptions): Promise<ServerHandle> {
  const serve = (req: IncomingMessage, res: ServerResponse, expectsContinue: boolean) => {
    let finished = false;
    // Only requests that reach `read` are told to send their body (RFC 9110 §10.1.1): a route or size
    // refusal is answered at once, and a sender waiting for 100 Continue never uploads it.
    let continued = !expectsContinue;
    const url = originForm(req.url ?? "/");
    const query = url.indexOf("?");
    const head = {
      method: (req.method ?? "GET").toUpperCase(),
      path: query === -1 ? url : url.slice(0, query),
      headers: headersOf(req.rawHeaders),
    };
    handler(
      head,
      {
        read(limit, done) {
          if (!continued) {
            continued = true;
            res.writeContinue();
          }
          const collector = new BodyCollector(limit);
          let over = false;
          req.on("data", (chunk: Buffer) => {
            if (finished || over) return;
            if (!collector.add(chunk)) {
              over = true;
              done("too_large");
            }
          });
          req.on("end", () => {
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
        res.writeHead(answer.status, {
          ...answer.headers,
          "Content-Type": contentTypeOf(answer),
          "Content-Length": Buffer.byteLength(json),
          ...(close || !continued ? { Connection: "close" } : {}),
        });
        if (!close || req.complete || !continued) {
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
  const server = createServer(SLOW_SENDER_LIMITS, (req, res) => serve(req, res, false));
  server.on("checkContinue", (req, res) => serve(req, res, true));
  server.keepAliveTimeout = 5000;
  return new Promise((resolve, reject) => {
    server.once("error", (err) =>
      reject(new Error(`cannot listen on ${options.host}:${options.port} (${err.message})`)),
    );
    // Node's default backlog (511) drops connects in a burst of thousands and the senders retry after 1 s,
    // 3 s, ...: a 5,000-connection burst took 14 s to be answered, 6.6 s with 4096 (capped by somaxconn).
    server.listen({ port: options.port, host: options.host, backlog: 4096 }, () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : options.port;
      resolve({
        impl: "node",
        host: options.host,
        port,
        close() {
          server.close();
          server.closeIdleConnections();
        },
      });
    });
  });
}
