import { type RequestOptions, request } from "node:http";
import { urlToHttpOptions } from "node:url";
import { SvcError } from "../errors.js";
import { INSTANCE_HEADER } from "./http/instanceHeader.js";

/** The gateway's answer as the CLI prints it. */
export interface LocalAnswer {
  readonly status: number;
  /** The reason phrase the server sent (`Accepted`). */
  readonly statusText: string;
  readonly text: string;
  /** The answer's `Retry-After` header (a 429's seconds until the route's window reopens), when it has one. */
  readonly retryAfter?: string;
  /** The answer's `Svc-Instance` header (a gateway's `/health` 200 names its instance in it), when it has one. */
  readonly instance?: string;
}

export interface LocalRequest {
  readonly method?: string;
  /** Values are sent as their bytes (latin1), as node:http writes them. */
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Uint8Array;
  readonly timeoutMs: number;
}

/**
 * One request to the gateway this machine runs (`svc webhook test` / `redeliver`, the `/health` check of
 * `svc gateway start` and `status`), over node:http rather than fetch: fetch refuses the ports the Fetch
 * standard calls "bad" (6000, 6665-6669, 10080, 5060, ...: "fetch failed", cause "bad port") before
 * connecting, though the gateway listens on whatever `port` says. Rejects with the socket's error
 * (`connect ECONNREFUSED ...`) or a timeout naming its seconds: a `gateway_timeout` SvcError when the
 * connection was made and the request sent (the server has it, and may still act on it), and an
 * `outcome_uncertain` one for a connection the server closed, once it had the whole request, without an
 * answer (it stopped or crashed while handling it: it may have acted on it).
 */
export function localRequest(url: string, init: LocalRequest): Promise<LocalAnswer> {
  return new Promise((resolve, reject) => {
    const options = { ...target(url), method: init.method ?? "GET", headers: init.headers };
    const req = request(options, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      const retryAfter = res.headers["retry-after"];
      const instance = res.headers[INSTANCE_HEADER.toLowerCase()];
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          statusText: res.statusMessage ?? "",
          text: Buffer.concat(chunks).toString("utf8"),
          ...(retryAfter === undefined ? {} : { retryAfter }),
          ...(typeof instance === "string" ? { instance } : {}),
        }),
      );
      res.on("error", reject);
    });
    let connected = false;
    req.on("socket", (socket) => {
      if (socket.connecting) socket.once("connect", () => (connected = true));
      else connected = true;
    });
    let sent = false;
    req.on("finish", () => (sent = true));
    req.setTimeout(init.timeoutMs, () => {
      const text = `no answer within ${init.timeoutMs / 1000} s`;
      req.destroy(connected ? new SvcError("gateway_timeout", text) : new Error(text));
    });
    req.on("error", (err) =>
      reject(
        sent && connected && !(err instanceof SvcError)
          ? new SvcError("outcome_uncertain", err.message, { cause: err })
          : err,
      ),
    );
    req.end(init.body);
  });
}

/**
 * Where `url` points, as node:http takes it. A link-local IPv6 host with its zone (`http://[fe80::1%eth0]:8644/`,
 * a gateway bound to `fe80::1%eth0`) is no URL a parser takes, but the socket connects to it.
 */
function target(url: string): RequestOptions {
  const zoned = /^http:\/\/\[([0-9a-f:.]+%[^\]/]+)\]:(\d+)(\/.*)?$/i.exec(url);
  if (zoned === null) return urlToHttpOptions(new URL(url));
  return { host: zoned[1] as string, port: Number(zoned[2]), path: zoned[3] ?? "/" };
}
