import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One request as the fake platform API received it. */
export interface RecordedRequest {
  readonly method: string;
  /** Path and query, as sent. */
  readonly url: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly text: string;
  /** Parsed JSON body, or undefined. */
  readonly json: unknown;
  /** Parsed form body (application/x-www-form-urlencoded), or undefined. */
  readonly form: URLSearchParams | undefined;
}

export interface FakeReply {
  readonly status?: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly json?: unknown;
  readonly text?: string;
  /** Answer only after this long (to provoke client timeouts). */
  readonly delayMs?: number;
}

export type FakeHandler = (request: RecordedRequest) => FakeReply | Promise<FakeReply>;

export interface FakeApi {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Answers for the next requests, in order; once used up, the default handler answers. */
  enqueue(...replies: FakeReply[]): void;
  setHandler(handler: FakeHandler): void;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function record(req: IncomingMessage, text: string): RecordedRequest {
  const parsed = new URL(req.url ?? "/", "http://fake");
  let json: unknown;
  try {
    json = text === "" ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  const isForm = String(req.headers["content-type"] ?? "").startsWith("application/x-www-form-urlencoded");
  return {
    method: req.method ?? "GET",
    url: req.url ?? "/",
    path: parsed.pathname,
    query: parsed.searchParams,
    headers: req.headers,
    text,
    json,
    form: isForm ? new URLSearchParams(text) : undefined,
  };
}

/** A local stand-in for a platform API on 127.0.0.1, port 0: records every request and answers as told. */
export async function startFakeApi(handler: FakeHandler = () => ({ json: {} })): Promise<FakeApi> {
  const requests: RecordedRequest[] = [];
  const queue: FakeReply[] = [];
  let current = handler;
  const sockets = new Set<import("node:net").Socket>();
  const server: Server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const request = record(req, await readBody(req));
    requests.push(request);
    const reply = queue.shift() ?? (await current(request));
    if (reply.delayMs !== undefined) await new Promise((r) => setTimeout(r, reply.delayMs));
    if (res.destroyed) return;
    const body = reply.json !== undefined ? JSON.stringify(reply.json) : (reply.text ?? "");
    res.writeHead(reply.status ?? 200, {
      ...(reply.json !== undefined ? { "content-type": "application/json" } : {}),
      ...reply.headers,
    });
    res.end(body);
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    enqueue: (...replies) => queue.push(...replies),
    setHandler: (next) => {
      current = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
