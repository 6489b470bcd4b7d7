import { createHmac } from "node:crypto";
import { Agent, request as httpRequest } from "node:http";
import { type AddressInfo, connect, createServer } from "node:net";
import { brotliDecompressSync, gunzipSync, inflateSync } from "node:zlib";
import { sign } from "@octokit/webhooks-methods";

export interface JsonAnswer {
  readonly status: number;
  readonly body: Record<string, unknown>;
  readonly headers: Headers;
}

/** POSTs `body` (an object is JSON-encoded) and parses the JSON answer. */
export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<JsonAnswer> {
  const text = typeof body === "string" || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  const res = await post(url, text, { "content-type": "application/json", ...headers });
  return { status: res.status, body: res.json() as Record<string, unknown>, headers: res.headers };
}

/**
 * The helpers' own connection pool, kept alive as fetch's: not node:http's global one, which an svc command
 * run in the worker (test/helpers/inProcessCli.ts) uses too and would otherwise send over a connection a
 * test opened before the gateway began to stop.
 */
const AGENT = new Agent({ keepAlive: true });

/** The headers `fetch` adds to a request that does not set them (undici, over plain http). */
const FETCH_DEFAULTS: Readonly<Record<string, string>> = {
  accept: "*/*",
  "accept-language": "*",
  "sec-fetch-mode": "cors",
  "user-agent": "node",
  "accept-encoding": "gzip, deflate",
};

const DECODE: Readonly<Record<string, (bytes: Buffer) => Buffer>> = {
  gzip: gunzipSync,
  "x-gzip": gunzipSync,
  deflate: inflateSync,
  br: brotliDecompressSync,
};

/**
 * POSTs `body` as `fetch` does, the same headers on the wire (`init` merged as a `Headers` merges it, then
 * fetch's defaults), the answer decoded and its JSON read as `Response.json()` reads it, and a failure
 * rejected as fetch's `TypeError("fetch failed")` with the cause; over node:http, which costs a third of
 * fetch's CPU per request (~1 ms against ~3.7 ms, the gateway's side included). An https URL goes through
 * fetch itself.
 */
function post(
  url: string,
  body: string | Buffer,
  init: Record<string, string>,
): Promise<{ status: number; headers: Headers; json(): unknown }> {
  if (!url.startsWith("http:")) {
    return fetch(url, { method: "POST", headers: init, body }).then(async (res) => {
      const parsed: unknown = await res.json();
      return { status: res.status, headers: res.headers, json: () => parsed };
    });
  }
  const sent = new Headers(init);
  for (const [name, value] of Object.entries(FETCH_DEFAULTS)) if (!sent.has(name)) sent.set(name, value);
  if (!sent.has("content-length")) sent.set("content-length", String(Buffer.byteLength(body)));
  return new Promise((resolve, reject) => {
    const failed = (cause: unknown) => reject(new TypeError("fetch failed", { cause }));
    let req: ReturnType<typeof httpRequest>;
    try {
      req = httpRequest(url, { method: "POST", headers: Object.fromEntries(sent), agent: AGENT }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("error", failed);
        res.on("end", () => {
          const headers = new Headers();
          for (let i = 0; i + 1 < res.rawHeaders.length; i += 2)
            headers.append(res.rawHeaders[i] as string, res.rawHeaders[i + 1] as string);
          let bytes: Buffer = Buffer.concat(chunks);
          try {
            // As fetch does: codings undone last first.
            for (const coding of (headers.get("content-encoding") ?? "").split(",").reverse()) {
              const decode = DECODE[coding.trim().toLowerCase()];
              if (decode !== undefined) bytes = decode(bytes);
            }
          } catch (err) {
            failed(err);
            return;
          }
          const text = new TextDecoder().decode(bytes);
          resolve({ status: res.statusCode ?? 0, headers, json: () => JSON.parse(text) });
        });
      });
    } catch (err) {
      // An invalid header value, as fetch refuses it: before anything is sent.
      reject(new TypeError("fetch failed", { cause: err }));
      return;
    }
    req.on("error", failed);
    // As bytes: a string body would be sent with the head in one UTF-8 write, turning a header value of
    // latin1 characters (a UTF-8 value as fetch takes it) into other bytes than fetch sends.
    req.end(typeof body === "string" ? Buffer.from(body) : body);
  });
}

export async function request(url: string, init: RequestInit = {}): Promise<JsonAnswer> {
  const res = await fetch(url, init);
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
}

export interface RawAnswer {
  readonly status: number;
  readonly head: string;
  readonly body: string;
}

/**
 * Writes raw bytes on a fresh TCP connection and reads until the server answers one response (or closes).
 * `chunks` are written one after another; writing stops quietly if the server has already closed.
 */
export function rawHttp(port: number, chunks: readonly (string | Buffer)[]): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let received = "";
    let settled = false;
    const finish = () => {
      if (settled) return;
      const split = received.indexOf("\r\n\r\n");
      if (split === -1) return;
      const head = received.slice(0, split);
      const length = /content-length:\s*(\d+)/i.exec(head);
      const body = received.slice(split + 4);
      if (length !== null && Buffer.byteLength(body) < Number(length[1])) return;
      settled = true;
      socket.destroy();
      resolve({ status: Number(head.split(" ")[1]), head, body });
    };
    socket.on("data", (data) => {
      received += data.toString("utf8");
      finish();
    });
    socket.on("error", (err) => {
      if (!settled && received === "") reject(err);
      else finish();
    });
    socket.on("close", () => {
      finish();
      if (!settled) reject(new Error(`connection closed before a full answer: ${JSON.stringify(received)}`));
    });
    socket.on("connect", () => {
      for (const chunk of chunks) {
        if (socket.destroyed) return;
        socket.write(chunk);
      }
    });
  });
}

/** A loopback TCP port that is free right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

const PICKED_PORT_TRIES = 5;

/** What a start says when its port is taken: node's EADDRINUSE, or a message saying the port is in use. */
const portTaken = (err: unknown): boolean =>
  (err as { code?: unknown } | undefined)?.code === "EADDRINUSE" ||
  /\bin use\b/i.test(err instanceof Error ? err.message : String(err));

/**
 * Runs `attempt` again, up to five times in all, while it fails because a port it picked was taken: a port
 * `freePort` picked and let go can be taken by another socket before the start binds it.
 */
export async function retryWhilePortTaken<T>(attempt: () => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await attempt();
    } catch (err) {
      if (tries === PICKED_PORT_TRIES || !portTaken(err)) throw err;
    }
  }
}

/**
 * Starts what must listen on a port given up front (not 0) on one `freePort` picked, picking again while
 * the port it got was taken (`retryWhilePortTaken`). Resolves with the port and what `start` gave.
 */
export function onPickedPort<T>(start: (port: number) => Promise<T>): Promise<readonly [number, T]> {
  return retryWhilePortTaken(async () => {
    const port = await freePort();
    return [port, await start(port)] as const;
  });
}

export interface RawExchange {
  /** Everything the server wrote, as latin1 (byte for byte). */
  readonly received: string;
  /** True when the server closed the connection within the wait; false when it was still open. */
  readonly closed: boolean;
}

/**
 * Writes raw bytes on a fresh TCP connection and collects what the server writes until it closes the
 * connection, or `waitMs` passes with it still open (then `closed` is false).
 */
export function rawUntilClose(port: number, bytes: string | Buffer, waitMs = 3000): Promise<RawExchange> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    let received = "";
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ received, closed: false });
    }, waitMs);
    socket.on("data", (data) => {
      received += data.toString("latin1");
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      clearTimeout(timer);
      resolve({ received, closed: true });
    });
    socket.on("connect", () => socket.write(bytes));
  });
}

/** What `rawAnswered` collected: `answers` holds each full answer (a head, and the body its Content-Length names). */
export interface RawAnswers extends RawExchange {
  readonly answers: readonly string[];
}

/**
 * Writes `requests` on a fresh TCP connection, each once the server has answered the one before in full
 * (an interim 1xx counts as an answer); resolves as soon as the last one is answered (`closed` false), the
 * server closes the connection (`closed` true), or `timeoutMs` passes (`closed` false, fewer answers than
 * requests). A bound for a loaded machine, never a wait: an answer that comes resolves at once.
 */
export function rawAnswered(
  port: number,
  requests: readonly (string | Buffer)[],
  timeoutMs = 15_000,
): Promise<RawAnswers> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    let received = "";
    const answers: string[] = [];
    let settled = false;
    const settle = (closed: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ received, closed, answers });
    };
    const timer = setTimeout(() => settle(false), timeoutMs);
    /** The answers `received` holds in full (bodies are ASCII here: latin1 lengths are byte lengths). */
    const complete = (): string[] => {
      const found: string[] = [];
      let at = 0;
      for (;;) {
        const split = received.indexOf("\r\n\r\n", at);
        if (split === -1) return found;
        const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(received.slice(at, split))?.[1] ?? 0);
        const end = split + 4 + length;
        if (received.length < end) return found;
        found.push(received.slice(at, end));
        at = end;
      }
    };
    socket.on("data", (data) => {
      received += data.toString("latin1");
      const done = complete();
      while (answers.length < done.length) {
        answers.push(done[answers.length] as string);
        const next = requests[answers.length];
        if (next === undefined) return settle(false);
        socket.write(next);
      }
    });
    socket.on("error", () => {});
    socket.on("close", () => settle(true));
    socket.on("connect", () => socket.write(requests[0] ?? ""));
  });
}

/** An answer, or the connection error of a gateway that went away mid-burst. */
export type DeliveryAnswer = { status: number; body: Record<string, unknown> } | { error: string };

/** One GitHub-style `pull_request` delivery signed with `secret`, as a burst sends it; never rejects. */
export async function deliverSigned(
  port: number,
  route: string,
  id: string,
  secret: string,
  payload: Record<string, unknown> = { number: id },
): Promise<DeliveryAnswer> {
  const body = JSON.stringify(payload);
  try {
    const res = await post(`http://127.0.0.1:${port}/webhooks/${route}`, body, {
      "content-type": "application/json",
      "X-GitHub-Event": "pull_request",
      "X-GitHub-Delivery": id,
      "X-Hub-Signature-256": await sign(secret, body),
    });
    return { status: res.status, body: res.json() as Record<string, unknown> };
  } catch (err) {
    return { error: String((err as Error).cause ?? err) };
  }
}

/** An `issues` event POSTed to `url` signed with `secret` (X-Hub-Signature-256), as a code host sends it. */
export function postSignedIssue(url: string, secret: string, body: unknown, id: string): Promise<JsonAnswer> {
  const text = JSON.stringify(body);
  const signature = `sha256=${createHmac("sha256", secret).update(text).digest("hex")}`;
  return postJson(url, text, {
    "X-Hub-Signature-256": signature,
    "X-GitHub-Event": "issues",
    "X-GitHub-Delivery": id,
  });
}
