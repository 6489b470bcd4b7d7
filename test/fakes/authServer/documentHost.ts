import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { Agent, fetch as undiciFetch } from "undici";

export type DocumentAnswer = (url: string, res: ServerResponse) => void;

export interface DocumentHost {
  /** Base https URL (self-signed certificate for 127.0.0.1). */
  readonly base: string;
  /** A fetch that trusts this host's certificate (and works for plain http too). */
  readonly fetch: FetchLike;
  answer: DocumentAnswer;
  close(): Promise<void>;
}

/** An HTTPS server on loopback for client metadata documents, with a throwaway self-signed certificate (P-256: an RSA key
 * cost 0.1–0.5 s of CPU to generate). */
export async function startDocumentHost(): Promise<DocumentHost> {
  const dir = mkdtempSync(join(tmpdir(), "svc-cert-"));
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:P-256",
      "-nodes",
      "-keyout",
      join(dir, "key.pem"),
      "-out",
      join(dir, "cert.pem"),
      "-days",
      "1",
      "-subj",
      "/CN=127.0.0.1",
      "-addext",
      "subjectAltName=IP:127.0.0.1",
    ],
    { stdio: "ignore" },
  );
  const cert = readFileSync(join(dir, "cert.pem"));
  const key = readFileSync(join(dir, "key.pem"));
  rmSync(dir, { recursive: true, force: true });
  const host: DocumentHost = {
    base: "",
    fetch: undefined as never,
    answer: (_url, res) => res.writeHead(404).end(),
    close: async () => {},
  };
  const server = createServer({ cert, key }, (req, res) => host.answer(`${host.base}${req.url ?? "/"}`, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const agent = new Agent({ connect: { ca: cert } });
  Object.assign(host, {
    base: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    fetch: ((url: string | URL, init?: RequestInit) =>
      undiciFetch(url, { ...(init as object), dispatcher: agent } as never)) as unknown as FetchLike,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await agent.close();
    },
  });
  return host;
}
