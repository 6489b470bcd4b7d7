import { createServer, type IncomingMessage, request, type ServerResponse } from "node:http";
import { createServer as createTlsServer } from "node:https";
import { type AddressInfo, connect, type Socket } from "node:net";

export interface ForwardProxy {
  /** `http://127.0.0.1:<port>`, with `user:password@` (percent-encoded) when the proxy asks for them. */
  readonly url: string;
  /** The `host:port` of every CONNECT asked for, in order (refused ones included). */
  readonly tunnels: string[];
  /** The absolute URL of every forwarded (plain http) request, in order. */
  readonly forwarded: string[];
  /** The `Proxy-Authorization` header of every CONNECT and forwarded request (undefined: none sent). */
  readonly authorizations: (string | undefined)[];
  close(): Promise<void>;
}

/**
 * A forwarding and CONNECT proxy on 127.0.0.1, as a company proxy is: it connects to the `host:port`
 * asked for through `routes` (`model.test:443` → `127.0.0.1:<port>` of a local fake), so the names need
 * not resolve and svc never resolves them. A host missing from `routes` is answered 403, as a proxy
 * answers a destination it does not allow. With `auth` (`user:password`), a request without that Basic
 * `Proxy-Authorization` is answered 407. With `tls` it is an `https://` proxy (TLS between svc and it).
 */
export async function startForwardProxy(
  routes: Readonly<Record<string, string>>,
  auth?: string,
  tls?: { readonly key: string; readonly cert: string },
): Promise<ForwardProxy> {
  const tunnels: string[] = [];
  const forwarded: string[] = [];
  const authorizations: (string | undefined)[] = [];
  const sockets = new Set<Socket>();
  const expected = auth === undefined ? undefined : `Basic ${Buffer.from(auth).toString("base64")}`;
  const refused = (header: string | undefined) => expected !== undefined && header !== expected;
  const route = (hostPort: string) => routes[hostPort.toLowerCase()];
  const forward = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/");
    const header = req.headers["proxy-authorization"];
    forwarded.push(url.href);
    authorizations.push(header);
    if (refused(header)) {
      res.writeHead(407, { "proxy-authenticate": 'Basic realm="proxy"' }).end();
      return;
    }
    const to = route(url.port === "" ? `${url.hostname}:80` : url.host);
    if (to === undefined) {
      res.writeHead(403).end("destination not allowed");
      return;
    }
    const [host, port] = to.split(":");
    const { "proxy-authorization": _auth, "proxy-connection": _conn, ...headers } = req.headers;
    const out = request(
      { host, port: Number(port), method: req.method, path: `${url.pathname}${url.search}`, headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on("error", () => res.destroy());
    req.pipe(out);
  };
  const server = tls === undefined ? createServer(forward) : createTlsServer(tls, forward);
  server.on(tls === undefined ? "connection" : "secureConnection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  server.on("connect", (req, client: Socket, head: Buffer) => {
    const header = req.headers["proxy-authorization"];
    tunnels.push(req.url ?? "");
    authorizations.push(header);
    if (refused(header)) {
      client.end(
        'HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="proxy"\r\n\r\n',
      );
      return;
    }
    const to = route(req.url ?? "");
    if (to === undefined) {
      client.end("HTTP/1.1 403 Forbidden\r\n\r\n");
      return;
    }
    const [host, port] = to.split(":");
    const origin = connect(Number(port), host, () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) origin.write(head);
      origin.pipe(client);
      client.pipe(origin);
    });
    sockets.add(origin);
    origin.on("close", () => sockets.delete(origin));
    origin.on("error", () => client.destroy());
    client.on("error", () => origin.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${tls === undefined ? "http" : "https"}://${auth === undefined ? "" : `${auth.split(":").map(encodeURIComponent).join(":")}@`}127.0.0.1:${port}`,
    tunnels,
    forwarded,
    authorizations,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
