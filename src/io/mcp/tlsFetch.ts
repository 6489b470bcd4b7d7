import { createPrivateKey, type KeyObject, X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { rootCertificates } from "node:tls";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { Dispatcher } from "undici";
import { keptAsWrittenHint } from "../../config/interpolate.js";
import type { McpServerEntry } from "../../config/sections/mcp.js";
import { importExternal } from "../importExternal.js";
import { outboundDispatcher } from "../outbound/dispatcher.js";
import { notUtf8Text } from "../textEncoding.js";
import { ConnectAttempts, type ConnectStall } from "./connectAttempts.js";
import { OwnWordsError } from "./entrySecrets.js";
import { shownPath } from "./shownPath.js";
import { secureContextFor, systemCaCertificates } from "./systemCas.js";

/**
 * A fetch bound to one server's TLS settings; `close` ends the connections still being made and releases
 * its connection pool.
 */
export interface TlsFetch {
  readonly fetch: FetchLike;
  /** Where its connections stopped, when none was made (`ConnectAttempts.stall`). */
  stall(): ConnectStall | undefined;
  close(): Promise<void>;
}

type TlsEntry = Pick<McpServerEntry, "ssl_verify" | "client_cert" | "client_key">;
type PartialTlsEntry = Partial<TlsEntry>;

function readPem(server: string, what: string, path: string, written?: string): Buffer {
  const shown = shownPath(path, written);
  try {
    return readFileSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EISDIR")
      // A directory of certificates (/etc/ssl/certs, as curl's --capath takes one): svc reads one file.
      throw new OwnWordsError(
        "mcp_config",
        `mcp_servers.${server}: ${what} is a directory, not a PEM file: ${shown} — name the PEM file itself${what === "ssl_verify CA bundle" ? " (a bundle of the CAs to trust, such as /etc/ssl/certs/ca-certificates.crt; ssl_verify: true trusts the system's CAs)" : ""}`,
      );
    const problem = code === "ENOENT" ? "file not found" : `file cannot be read (${code ?? "error"})`;
    throw new OwnWordsError(
      "mcp_config",
      `mcp_servers.${server}: ${what} ${problem}: ${shown}${code === "ENOENT" ? notFoundHint(what, path, written) : ""}`,
    );
  }
}

/**
 * Why a path is not there: a `${VAR}` in it that nothing set (the path was used as written), or a
 * switch written as text (below).
 */
function notFoundHint(what: string, path: string, written?: string): string {
  const unset = keptAsWrittenHint(path, "the path was used", written);
  return unset === undefined ? switchHint(what, path) : ` — ${unset}`;
}

/**
 * A quoted `ssl_verify: "false"` (or a `${VAR}` that renders to `false`) is a string, so a CA bundle path:
 * when no such file exists, say how the switch is written.
 */
function switchHint(what: string, path: string): string {
  const word = path.trim().toLowerCase();
  if (what !== "ssl_verify CA bundle" || !/^(?:true|false|yes|no|on|off|0|1)$/.test(word)) return "";
  const value = /^(?:false|no|off|0)$/.test(word) ? "false" : "true";
  return ` — a text value of ssl_verify is a CA bundle path; to turn verification ${value === "false" ? "off" : "on"}, write ssl_verify: ${value} without quotes (not through \${VAR})`;
}

/**
 * Why a PEM file shows no marker although it may hold one: saved as UTF-16 (PowerShell 5's `>`, an export
 * from a Windows tool), whose bytes hold the marker's letters apart. Empty otherwise.
 */
function utf16Note(bytes: Buffer): string {
  const problem = notUtf8Text(bytes);
  return problem?.startsWith("saved as UTF-16") ? `: it is ${problem}` : "";
}

/** A path for a command to paste: one a shell would split (a space, a quote) is written `<file>`. */
const commandPath = (path: string): string => (/^[\w./~+-]+$/.test(path) ? path : "<file>");

/** The paths of the TLS files as checkPem reads them, and as its messages name them (`shownPath`). */
interface PemPaths {
  readonly ca?: string;
  readonly cert?: string;
  readonly key?: string;
  readonly shown: { ca?: string; cert?: string; key?: string };
}

/** A path for a command to paste, none made from a path a `${VAR}` gave (`shown` is then not the path). */
const pastedPath = (path: string, shown: string): string => (shown === path ? commandPath(path) : "<file>");

/**
 * Why a certificate file holds no PEM marker: saved as UTF-16 (above), a PKCS#12 bundle, or a certificate
 * in binary DER form (a `.cer` or `.der` exported from Windows or a browser): TLS here reads only PEM.
 */
function certificateNote(bytes: Buffer, path: string, shown: string): string {
  const utf16 = utf16Note(bytes);
  if (utf16 !== "") return utf16;
  const file = pastedPath(path, shown);
  // A PKCS#12 bundle (.p12, .pfx: certificate and key in one binary file, as Windows and Java export them).
  if (/\.(?:p12|pfx)$/i.test(path) && bytes[0] === 0x30)
    return `: it is a PKCS#12 bundle (binary) — convert it to PEM (openssl pkcs12 -in ${file} -out ${file}.pem -nodes) and name the PEM file`;
  try {
    new X509Certificate(bytes);
  } catch {
    return "";
  }
  return `: it is a certificate in binary DER form — convert it to PEM (openssl x509 -inform der -in ${file} -out ${file}.pem) and name the PEM file`;
}

/** Why a key file holds no PEM marker: saved as UTF-16, or a private key in binary DER form. */
function keyNote(bytes: Buffer, path: string, shown: string): string {
  const utf16 = utf16Note(bytes);
  if (utf16 !== "") return utf16;
  const der = (["pkcs8", "pkcs1", "sec1"] as const).some((type) => {
    try {
      createPrivateKey({ key: bytes, format: "der", type });
      return true;
    } catch {
      return false;
    }
  });
  if (!der) return "";
  const file = pastedPath(path, shown);
  return `: it is a private key in binary DER form — convert it to PEM (openssl pkey -inform der -in ${file} -out ${file}.pem) and name the PEM file`;
}

/**
 * Checks what TLS would otherwise report as an OpenSSL code at connect ("DECODER routines::unsupported",
 * "bad decrypt"): a CA bundle without certificates, a client certificate without a key, an encrypted key
 * without or with the wrong password, a key that does not belong to the certificate.
 */
function checkPem(
  server: string,
  paths: PemPaths,
  pem: { ca?: Buffer; cert?: Buffer; key?: Buffer; passphrase?: string },
  writtenPassphrase?: string,
): void {
  const { shown } = paths;
  const fail = (message: string) => {
    throw new OwnWordsError("mcp_config", `mcp_servers.${server}: ${message}`);
  };
  if (pem.ca !== undefined && !pem.ca.includes("-----BEGIN CERTIFICATE-----"))
    fail(
      `ssl_verify CA bundle ${shown.ca} holds no PEM certificate (-----BEGIN CERTIFICATE-----)${certificateNote(pem.ca, paths.ca as string, shown.ca as string)}`,
    );
  if (pem.cert === undefined || pem.key === undefined) return;
  if (!pem.cert.includes("-----BEGIN CERTIFICATE-----"))
    fail(
      `client_cert ${shown.cert} holds no PEM certificate (-----BEGIN CERTIFICATE-----)${certificateNote(pem.cert, paths.cert as string, shown.cert as string)}`,
    );
  if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(pem.key.toString("latin1"))) {
    fail(
      paths.key === paths.cert
        ? `client_cert ${shown.cert} holds no private key — add it to the file, name the key file with client_key, or use [cert, key]`
        : `client_cert key ${shown.key} holds no PEM private key${keyNote(pem.key, paths.key as string, shown.key as string)}`,
    );
  }
  let key: KeyObject;
  try {
    key = createPrivateKey({
      key: pem.key,
      ...(pem.passphrase === undefined ? {} : { passphrase: pem.passphrase }),
    });
  } catch {
    fail(
      pem.passphrase === undefined
        ? `the private key in ${shown.key} is encrypted — give its password as the third element: client_cert: [cert, key, password]`
        : `the private key in ${shown.key} cannot be decrypted with the configured password (client_cert[2])${passwordHint(pem.passphrase, writtenPassphrase)}`,
    );
    return;
  }
  let matches = true;
  try {
    matches = new X509Certificate(pem.cert).checkPrivateKey(key);
  } catch {
    // An unparsable certificate is left for TLS to report.
  }
  if (!matches) fail(`the private key in ${shown.key} does not belong to the certificate in ${shown.cert}`);
}

/** A password holding a `${VAR}` nothing set was used as written (its text is never shown). */
function passwordHint(password: string, written?: string): string {
  const unset = keptAsWrittenHint(password, "the password was used", written);
  return unset === undefined ? "" : ` — ${unset}`;
}

/**
 * Connection options for undici: CA bundle (`ssl_verify: true`: the system's CAs, see systemCas.ts),
 * verification switch and client certificate (mTLS).
 */
/** `entry` rendered; `written`, as config.yaml writes it, tells which `${...}` of a value nothing set. */
export function tlsConnectOptions(server: string, entry: TlsEntry, written: PartialTlsEntry = {}) {
  const writtenCert = typeof written.client_cert === "string" ? [written.client_cert] : written.client_cert;
  const options: {
    ca?: Buffer | string[];
    rejectUnauthorized: boolean;
    cert?: Buffer;
    key?: Buffer;
    passphrase?: string;
  } = {
    rejectUnauthorized: entry.ssl_verify !== false,
  };
  const paths: {
    ca?: string;
    cert?: string;
    key?: string;
    shown: { ca?: string; cert?: string; key?: string };
  } = { shown: {} };
  let bundle: Buffer | undefined;
  if (typeof entry.ssl_verify === "string") {
    bundle = readPem(
      server,
      "ssl_verify CA bundle",
      entry.ssl_verify,
      typeof written.ssl_verify === "string" ? written.ssl_verify : undefined,
    );
    options.ca = bundle;
    paths.ca = entry.ssl_verify;
    paths.shown.ca = shownPath(
      entry.ssl_verify,
      typeof written.ssl_verify === "string" ? written.ssl_verify : undefined,
    );
  }
  const cert = entry.client_cert;
  if (typeof cert === "string") {
    options.cert = readPem(server, "client_cert", cert, writtenCert?.[0]);
    // A single PEM carries both certificate and key unless client_key names the key file.
    options.key =
      entry.client_key === undefined
        ? options.cert
        : readPem(server, "client_key", entry.client_key, written.client_key);
    paths.cert = cert;
    paths.key = entry.client_key ?? cert;
    paths.shown.cert = shownPath(cert, writtenCert?.[0]);
    paths.shown.key =
      entry.client_key === undefined ? paths.shown.cert : shownPath(entry.client_key, written.client_key);
  } else if (cert !== undefined) {
    options.cert = readPem(server, "client_cert", cert[0], writtenCert?.[0]);
    options.key = readPem(server, "client_cert key", cert[1], writtenCert?.[1]);
    if (cert[2] !== undefined) options.passphrase = cert[2];
    paths.cert = cert[0];
    paths.key = cert[1];
    paths.shown.cert = shownPath(cert[0], writtenCert?.[0]);
    paths.shown.key = shownPath(cert[1], writtenCert?.[1]);
  }
  const { ca: _ca, ...client } = options;
  checkPem(server, paths, bundle === undefined ? client : { ...client, ca: bundle }, writtenCert?.[2]);
  if (entry.ssl_verify === true) {
    const system = systemCaCertificates();
    if (system !== undefined) options.ca = system;
  }
  return options;
}

type ConnectOptions = ReturnType<typeof tlsConnectOptions>;

/**
 * undici's own wait for an answer's headers, and between its body's chunks (300 s). A server's tool that
 * answers later — a JSON answer is sent whole once the tool is done — failed there with `Headers Timeout Error`
 * whatever its `timeout` allowed, so a longer `timeout` (or `connect_timeout`) raises it; the call's own
 * timeout still bounds the call.
 */
const UNDICI_ANSWER_WAIT_MS = 300_000;

/**
 * A fetch through undici with its own Agent, both made at the first request: undici takes about a sixth
 * of a second to load, which a command or gateway that never calls an HTTP server should not pay.
 * Through the outbound proxy when one is set (io/outbound/): the TLS options apply to the server.
 */
function agentFetch(connect: ConnectOptions, connectTimeoutMs?: number, answerWaitMs?: number): TlsFetch {
  const attempts = new ConnectAttempts();
  // undici gives up a TCP connect or TLS handshake the server never completes after 10 s of its own.
  const timeout = connectTimeoutMs === undefined ? {} : { timeout: connectTimeoutMs };
  const wait =
    answerWaitMs === undefined
      ? {}
      : { headersTimeout: Math.ceil(answerWaitMs), bodyTimeout: Math.ceil(answerWaitMs) };
  let agent: Promise<{ agent: Dispatcher; fetch: typeof import("undici").fetch }> | undefined;
  const ready = () =>
    (agent ??= importExternal<typeof import("undici")>("undici").then((undici) => ({
      agent: outboundDispatcher(
        undici,
        {
          ...wait,
          connect: Array.isArray(connect.ca)
            ? {
                rejectUnauthorized: connect.rejectUnauthorized,
                secureContext: secureContextFor({ ...connect, ca: connect.ca }),
                ...timeout,
              }
            : { ...connect, ...timeout },
        },
        (connector) => attempts.watch(connector),
      ),
      fetch: undici.fetch,
    })));
  const fetch = (async (url: string | URL, init?: RequestInit) => {
    const undici = await ready();
    return undici.fetch(url, { ...(init as object), dispatcher: undici.agent } as Parameters<
      typeof undici.fetch
    >[1]);
  }) as unknown as FetchLike;
  return {
    fetch,
    stall: () => attempts.stall(),
    close: async () => {
      attempts.abandon();
      if (agent !== undefined) await (await agent).agent.close();
    },
  };
}

/**
 * undici's fetch with a dedicated Agent (undici 7.30+: 7.19 re-sent a POST endlessly on 401).
 * Missing certificate or CA files fail here, before any connection, with a server-scoped message.
 * `connectTimeoutMs` bounds each TCP connect and TLS handshake: one a connect gave up (a server that takes
 * the connection and never answers the handshake) no longer holds a command open past its connect_timeout.
 */
export function createTlsFetch(
  server: string,
  entry: TlsEntry,
  options: {
    readonly written?: PartialTlsEntry;
    readonly connectTimeoutMs?: number;
    /**
     * How long a request may wait for its answer's headers, and between its body's chunks, when longer than
     * undici's own 300 s (UNDICI_ANSWER_WAIT_MS).
     */
    readonly answerWaitMs?: number;
  } = {},
): TlsFetch {
  return agentFetch(
    tlsConnectOptions(server, entry, options.written),
    options.connectTimeoutMs,
    options.answerWaitMs === undefined ? undefined : Math.max(UNDICI_ANSWER_WAIT_MS, options.answerWaitMs),
  );
}

/**
 * The fetch under a server's OAuth requests (discovery, registration, token endpoint): its
 * `ssl_verify` and client certificate, like the MCP transport, so a private-CA server can log in.
 * A CA bundle is added to the system CAs rather than replacing them, because the authorization
 * server is often another host with a public certificate. Undefined when the entry sets no TLS key.
 */
export function createOAuthTlsFetch(server: string, entry: PartialTlsEntry): FetchLike | undefined {
  const sslVerify = entry.ssl_verify ?? true;
  const system = sslVerify === false ? undefined : systemCaCertificates();
  if (sslVerify === true && entry.client_cert === undefined && system === undefined) return undefined;
  const connect = tlsConnectOptions(server, {
    ssl_verify: sslVerify,
    ...(entry.client_cert === undefined ? {} : { client_cert: entry.client_cert }),
    ...(entry.client_key === undefined ? {} : { client_key: entry.client_key }),
  });
  return agentFetch(
    Buffer.isBuffer(connect.ca)
      ? { ...connect, ca: [...(system ?? rootCertificates), connect.ca.toString("utf8")] }
      : connect,
  ).fetch;
}
