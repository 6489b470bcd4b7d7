import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { DeliveryError } from "../../../src/io/targets/target.js";
import { type Certs, makeCerts } from "../../fixtures/mcp/certs.js";
import { message, registryFor, sendError } from "./support.js";

/**
 * A self-hosted platform (Mattermost, Matrix, Home Assistant) served under a company CA installed in the
 * system trust store (update-ca-certificates, or named by SSL_CERT_FILE) is trusted, as model endpoints, MCP
 * servers and Redis trust it. Before, delivery targets used Node's own CA list alone: every delivery failed
 * with `connection failed (UNABLE_TO_VERIFY_LEAF_SIGNATURE)`, retried three times, with no word of the CA.
 */
let dir: string;
let certs: Certs;
let server: Server;
let base: string;
const posts: string[] = [];
const savedCertFile = process.env.SSL_CERT_FILE;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "svc-target-tls-"));
  certs = await makeCerts(dir);
  server = createServer(
    { key: readFileSync(certs.serverKey), cert: readFileSync(certs.serverCert) },
    (req, res) => {
      let body = "";
      req.on("data", (chunk: Buffer) => {
        body += chunk.toString("utf8");
      });
      req.on("end", () => {
        posts.push(body);
        res.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify({ id: "p1" }));
      });
    },
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  if (savedCertFile === undefined) delete process.env.SSL_CERT_FILE;
  else process.env.SSL_CERT_FILE = savedCertFile;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

it("a certificate no CA of this system issued fails at once, not retried, saying how to trust its CA", async () => {
  // No system bundle holds the test CA yet: the system's own bundle stands (read at the first request).
  const registry = registryFor({ mattermost: { enabled: true, token: "t", base_url: base } });
  const error = await sendError(registry, "mattermost", message("hi", { chat_id: "c1" }));
  expect(error).toBeInstanceOf(DeliveryError);
  expect((error as DeliveryError).transient).toBe(false);
  expect((error as Error).message).toMatch(
    /^mattermost: create post: the server's TLS certificate is not trusted \([A-Z_]+\) — not retried; a certificate of a private or self-signed CA is trusted once that CA is in the system trust store \(update-ca-certificates\), or with svc started with SSL_CERT_FILE or NODE_EXTRA_CA_CERTS set to its PEM file$/,
  );
  expect(posts).toEqual([]);
});

it("a certificate of a CA in the system trust store (SSL_CERT_FILE) is trusted", async () => {
  process.env.SSL_CERT_FILE = certs.caCert;
  // The trust store is read once, at the first request (above): the targets are imported afresh to read it again.
  vi.resetModules();
  const fresh = await import("./support.js");
  const registry = fresh.registryFor({ mattermost: { enabled: true, token: "t", base_url: base } });
  await registry.get("mattermost")?.send(fresh.message("over TLS", { chat_id: "c1" }));
  expect(posts.map((p) => (JSON.parse(p) as { message: string }).message)).toEqual(["over TLS"]);
});

it("an https:// base_url at a server that speaks plain HTTP fails at once, saying to write http://", async () => {
  const plain = createHttpServer((_req, res) => res.end("{}"));
  await new Promise<void>((resolve) => plain.listen(0, "127.0.0.1", resolve));
  try {
    const port = (plain.address() as AddressInfo).port;
    const registry = registryFor({
      home_automation: { enabled: true, token: "t", base_url: `https://127.0.0.1:${port}` },
    });
    const error = await sendError(registry, "home_automation", message("hi", { chat_id: "notify.x" }));
    expect((error as DeliveryError).transient).toBe(false);
    expect((error as Error).message).toBe(
      "home_automation: notify.x: the server does not speak TLS on this port (ERR_SSL_WRONG_VERSION_NUMBER) — not retried; write http:// in base_url, or the port where it serves HTTPS",
    );
  } finally {
    await new Promise<void>((resolve) => plain.close(() => resolve()));
  }
});
