import { readFileSync } from "node:fs";
import { rootCertificates } from "node:tls";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { Agent, fetch as undiciFetch } from "undici";
import type { McpServerEntry } from "../../config/sections/mcp.js";
import { SvcError } from "../../errors.js";

/** A fetch bound to one server's TLS settings; `close` releases its connection pool. */
export interface TlsFetch {
  readonly fetch: FetchLike;
  close(): Promise<void>;
}

type TlsEntry = Pick<McpServerEntry, "ssl_verify" | "client_cert" | "client_key">;
type PartialTlsEntry = Partial<TlsEntry>;

function readPem(server: string, what: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const problem = code === "ENOENT" ? "file not found" : `file cannot be read (${code ?? "error"})`;
    throw new SvcError("mcp_config", `mcp_servers.${server}: ${what} ${problem}: ${path}`);
  }
}

/** Connection options for undici: CA bundle, verification switch and client certificate (mTLS). */
export function tlsConnectOptions(server: string, entry: TlsEntry) {
  const options: {
    ca?: Buffer;
    rejectUnauthorized: boolean;
    cert?: Buffer;
    key?: Buffer;
    passphrase?: string;
  } = {
    rejectUnauthorized: entry.ssl_verify !== false,
  };
  if (typeof entry.ssl_verify === "string")
    options.ca = readPem(server, "ssl_verify CA bundle", entry.ssl_verify);
  const cert = entry.client_cert;
  if (typeof cert === "string") {
    options.cert = readPem(server, "client_cert", cert);
    // A single PEM carries both certificate and key unless client_key names the key file.
    options.key =
      entry.client_key === undefined ? options.cert : readPem(server, "client_key", entry.client_key);
  } else if (cert !== undefined) {
    options.cert = readPem(server, "client_cert", cert[0]);
    options.key = readPem(server, "client_cert key", cert[1]);
    if (cert[2] !== undefined) options.passphrase = cert[2];
  }
  return options;
}

/**
 * undici's fetch with a dedicated Agent (undici 7.30+: 7.19 re-sent a POST endlessly on 401).
 * Missing certificate or CA files fail here, before any connection, with a server-scoped message.
 */
export function createTlsFetch(server: string, entry: TlsEntry): TlsFetch {
  const agent = new Agent({ connect: tlsConnectOptions(server, entry) });
  const fetch = ((url: string | URL, init?: RequestInit) =>
    undiciFetch(url, { ...(init as object), dispatcher: agent } as Parameters<
      typeof undiciFetch
    >[1])) as unknown as FetchLike;
  return { fetch, close: () => agent.close() };
}

/**
 * The fetch under a server's OAuth requests (discovery, registration, token endpoint): its
 * `ssl_verify` and client certificate, like the MCP transport, so a private-CA server can log in.
 * A CA bundle is added to the system CAs rather than replacing them, because the authorization
 * server is often another host with a public certificate. Undefined when the entry sets no TLS key.
 */
export function createOAuthTlsFetch(server: string, entry: PartialTlsEntry): FetchLike | undefined {
  const sslVerify = entry.ssl_verify ?? true;
  if (sslVerify === true && entry.client_cert === undefined) return undefined;
  const connect = tlsConnectOptions(server, {
    ssl_verify: sslVerify,
    ...(entry.client_cert === undefined ? {} : { client_cert: entry.client_cert }),
    ...(entry.client_key === undefined ? {} : { client_key: entry.client_key }),
  });
  const agent = new Agent({
    connect:
      connect.ca === undefined
        ? connect
        : { ...connect, ca: [...rootCertificates, connect.ca.toString("utf8")] },
  });
  return ((url: string | URL, init?: RequestInit) =>
    undiciFetch(url, { ...(init as object), dispatcher: agent } as Parameters<
      typeof undiciFetch
    >[1])) as unknown as FetchLike;
}
