import type { McpServerEntry } from "../../config/sections/mcp.js";
import { listedNames } from "./certNames.js";
import { shownPath } from "./shownPath.js";

type TlsEntry = Pick<McpServerEntry, "url" | "ssl_verify" | "client_cert">;

/** OpenSSL's words for a certificate chain it could not verify (Node's messages; older ones without the hyphen). */
export const UNTRUSTED =
  /unable to verify the first certificate|self[- ]signed certificate|unable to get (?:local )?issuer certificate|certificate signature failure/i;
export const WRONG_HOST = /does not match certificate's altnames|ERR_TLS_CERT_ALTNAME_INVALID/;
export const OUT_OF_DATE = /certificate has expired|certificate is not yet valid/i;
/** OpenSSL's words when the answer to its hello is no TLS record: a plain HTTP server on that port. */
export const NOT_TLS =
  /wrong version number|ERR_SSL_WRONG_VERSION_NUMBER|ERR_SSL_PACKET_LENGTH_TOO_LONG|http request/i;
/** What undici says when a server dropped the connection without answering (a TLS server sent plain HTTP). */
const CLOSED_UNANSWERED = /other side closed|socket hang up|ECONNRESET/i;
/**
 * OpenSSL's alerts from a server that refused the handshake for want of a client certificate it trusts, and
 * for nothing else: TLS 1.3's `certificate required`, `bad certificate`.
 */
export const CLIENT_CERT_REFUSED = /alert certificate required|alert bad certificate/i;
/**
 * OpenSSL's generic refusal, `handshake failure` (alert 40): a server that has no TLS version or cipher in
 * common with svc sends it (in TLS 1.2 and 1.3), and so does a TLS 1.2 server that requires a client
 * certificate and got none. Its words cannot tell the two apart.
 */
export const HANDSHAKE_REFUSED = /alert handshake failure/i;

/**
 * The first of the two causes of a `handshake failure` (HANDSHAKE_REFUSED), with its fix: the versions and
 * ciphers are Node.js's defaults, which svc keeps.
 */
export const NOTHING_IN_COMMON =
  "it has no TLS version or cipher in common with svc, which speaks TLS 1.2 and 1.3 (AES-GCM and ChaCha20 ciphers among others): let the server offer those";

/**
 * What a connection the server closed may say of the url rather than the server: an `http://` one closed
 * unanswered may be a TLS server sent plain HTTP (`http-to-tls`); an `https://` one closed (a TLS 1.3 server
 * drops it after the handshake) or refused with an alert that names a client certificate may be a server that
 * requires one (`tls-refused`). Undefined for any other failure. A server that crashed under the request closes it the
 * same way, so the caller says "if".
 */
export function closedConnection(url: string, text: string): "http-to-tls" | "tls-refused" | undefined {
  if (/^http:/i.test(url)) return CLOSED_UNANSWERED.test(text) ? "http-to-tls" : undefined;
  if (/^https:/i.test(url) && (CLOSED_UNANSWERED.test(text) || CLIENT_CERT_REFUSED.test(text)))
    return "tls-refused";
  return undefined;
}

/** The fix for an `http://` url whose server closed the connection unanswered, `urlKey` the url's key. */
export const servesHttps = (urlKey: string): string =>
  `if it serves HTTPS on this port, write https:// in ${urlKey}`;

/**
 * OpenSSL's error record as Node passes it on (`<hex>:error:<hex>:SSL routines:<function>:<reason>:<source
 * file>:<line>:`, a line break after it), then the code fetch's cause adds (` (ERR_SSL_WRONG_VERSION_NUMBER)`).
 */
const OPENSSL_RECORD = /\b[0-9A-F]+:error:[0-9A-F]+:[^\n(]*\s*\((ERR_[A-Z0-9_]+)\)/g;

/**
 * A remote connect's error on one line, OpenSSL's record dropped where its code follows: the code and the
 * hint after it say what the record does, which reads as a source file and line number. Applied after the
 * hints are chosen (they read the record's words).
 */
export function withoutOpensslRecord(text: string): string {
  return text.replace(OPENSSL_RECORD, "$1").replace(/[ \t]*[\r\n]+[ \t]*/g, " ");
}

/**
 * What to change when a connect to an `https://` server failed on TLS, as a suffix for the error: the
 * transports only say what OpenSSL said (`unable to verify the first certificate`), not which key fixes it.
 * A url whose scheme does not match the port (`https://` to a plain HTTP server, `http://` to a TLS one)
 * is named so; a certificate for another host, with the names it lists where `err` (the connect's error)
 * carries it; a handshake refused with `handshake failure`, both of its causes. Empty for any other failure.
 * `entry` is rendered; `written`, as config.yaml writes it: a CA bundle path a `${VAR}` gave is named as
 * written (`shownPath`), never by what the variable gave.
 */
export function tlsHint(
  server: string,
  text: string,
  entry: TlsEntry,
  err?: unknown,
  written: Partial<Pick<McpServerEntry, "ssl_verify">> = {},
): string {
  if (entry.url === undefined) return "";
  const key = `mcp_servers.${server}`;
  if (/^http:/i.test(entry.url))
    return closedConnection(entry.url, text) === "http-to-tls"
      ? ` — the server closed the connection without answering: ${servesHttps(`${key}.url`)}`
      : "";
  if (!/^https:/i.test(entry.url)) return "";
  if (NOT_TLS.test(text))
    return ` — the server does not speak TLS on this port (a plain HTTP server answered): write http:// in ${key}.url, or the port where it serves HTTPS`;
  if (OUT_OF_DATE.test(text))
    return ` — the server's certificate is out of date: renew it on the server (${key}.ssl_verify: false skips the check)`;
  if (WRONG_HOST.test(text))
    return ` — the server's certificate does not name the url's host: write the host name the certificate lists${listedNames(err)} in ${key}.url, or give the server a certificate for this host`;
  if (UNTRUSTED.test(text)) {
    if (typeof entry.ssl_verify === "string")
      return ` — the CA bundle in ${key}.ssl_verify (${shownPath(entry.ssl_verify, typeof written.ssl_verify === "string" ? written.ssl_verify : undefined)}) did not verify the server's certificate: point ssl_verify at the PEM bundle of the CA that issued it`;
    return ` — the server's certificate is not issued by a CA this system trusts (a private or self-signed CA): set ${key}.ssl_verify to the PEM bundle of that CA (or ssl_verify: false to skip verification)`;
  }
  if (HANDSHAKE_REFUSED.test(text))
    return entry.client_cert === undefined
      ? ` — the server refused the TLS handshake: either ${NOTHING_IN_COMMON}; or it requires a client certificate (mTLS): set ${key}.client_cert`
      : ` — the server refused the TLS handshake: either ${NOTHING_IN_COMMON}; or it refused svc's client certificate: check that ${key}.client_cert is issued by a CA the server trusts`;
  if (closedConnection(entry.url, text) === "tls-refused") {
    return entry.client_cert === undefined
      ? ` — the server closed the TLS connection: if it requires a client certificate (mTLS), set ${key}.client_cert`
      : ` — the server closed the TLS connection: if it refused svc's client certificate, check that ${key}.client_cert is issued by a CA the server trusts`;
  }
  return "";
}
