import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** A listener that answers `/health` as an svc gateway's body does, but is no gateway (`healthImpostor`). */
export interface HealthImpostor {
  readonly port: number;
  /** The `/health` requests it answered. */
  asked(): number;
  close(): Promise<void>;
}

/**
 * Another program on loopback `port` (0: one picked) that answers `GET /health` 200
 * `{"status":"ok","platform":"webhook"}`, an svc gateway's body, without the `Svc-Instance` header a gateway
 * names itself by: what takes a gone gateway's port (another test's listener, another program, a gateway of
 * an older svc). Close it in afterEach.
 */
export async function healthImpostor(port = 0): Promise<HealthImpostor> {
  let asked = 0;
  const server: Server = createServer((req, res) => {
    if (req.url === "/health") asked += 1;
    const status = req.url === "/health" ? 200 : 404;
    const body = status === 200 ? '{"status":"ok","platform":"webhook"}' : '{"error":"Not found"}';
    res.writeHead(status, { "content-type": "application/json" }).end(body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    asked: () => asked,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
