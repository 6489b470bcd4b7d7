import { APICallError } from "ai";
import { type CaFileProblem, caFileProblems, caFileProblemText } from "../io/mcp/caFileProblems.js";
import { listedNames } from "../io/mcp/certNames.js";
import {
  CLIENT_CERT_REFUSED,
  closedConnection,
  HANDSHAKE_REFUSED,
  NOT_TLS,
  NOTHING_IN_COMMON,
  OUT_OF_DATE,
  servesHttps,
  UNTRUSTED,
  WRONG_HOST,
} from "../io/mcp/tlsHints.js";

/** The message and code of a connection error, which the hints below read. */
function errorText(err: APICallError): string {
  return `${err.message} ${err.cause instanceof Error ? String((err.cause as { code?: unknown }).code ?? "") : ""}`;
}

/** What to do about an endpoint that requires a client certificate: svc has no setting to send one there. */
const WITHOUT_CLIENT_CERT =
  "let it take svc's requests without one, or put a proxy in front of it that presents one";

/**
 * What to change when an `https://` endpoint could not be reached for its certificate (or for speaking no
 * TLS at all, or refusing the handshake with an alert: to a client without a certificate, or with no TLS
 * version or cipher in common, which `handshake failure` does not tell apart), as a suffix for the error:
 * fetch says only what OpenSSL said (`unable to verify the first certificate`). Empty for any other failure,
 * which may pass (a refused connection, a reset). A non-empty hint is a failure no retry changes.
 */
export function modelTlsHint(
  err: unknown,
  env: Readonly<Record<string, string | undefined>> = process.env,
): string {
  if (!APICallError.isInstance(err) || err.statusCode !== undefined || !/^https:/i.test(err.url)) return "";
  const text = errorText(err);
  if (NOT_TLS.test(text))
    return " — the server does not speak TLS on this port (a plain HTTP server answered): write http:// in agent.base_url, or the port where it serves HTTPS";
  if (OUT_OF_DATE.test(text)) return " — its TLS certificate is out of date: renew it on the server";
  if (WRONG_HOST.test(text))
    return ` — its TLS certificate does not name the host of agent.base_url: write the host name the certificate lists${listedNames(err)} in agent.base_url, or give the server a certificate for this host`;
  if (UNTRUSTED.test(text)) return untrustedHint(caFileProblems(env));
  if (CLIENT_CERT_REFUSED.test(text))
    return ` — the server refused the TLS handshake, as one does that requires a client certificate (mTLS), which svc cannot send to a model endpoint: ${WITHOUT_CLIENT_CERT}`;
  if (HANDSHAKE_REFUSED.test(text))
    return ` — the server refused the TLS handshake: either ${NOTHING_IN_COMMON}; or it requires a client certificate (mTLS), which svc cannot send to a model endpoint: ${WITHOUT_CLIENT_CERT}`;
  return "";
}

/**
 * For a certificate no trusted CA issued: where to add its CA. A trust file svc could not use is named
 * (`SSL_CERT_FILE (<path>) could not be read: ...`): the reader set it, and takes its CA for trusted.
 */
function untrustedHint(problems: readonly CaFileProblem[]): string {
  const untrusted =
    " — its TLS certificate is not issued by a CA this system trusts (a private or self-signed CA)";
  if (problems.length === 0)
    return `${untrusted}: add that CA to the system trust store (update-ca-certificates), or start svc with SSL_CERT_FILE or NODE_EXTRA_CA_CERTS set to its PEM file`;
  const names = problems.map((p) => p.variable).join(" or ");
  return `${untrusted}, and ${problems.map(caFileProblemText).join(", and ")} — point ${names} at a readable PEM file holding that CA`;
}

/** Node's words for a connection the server closed before the TLS handshake was done. */
const CLOSED_IN_HANDSHAKE = /before secure TLS connection was established/i;

/**
 * What a connection the endpoint closed unanswered may say of agent.base_url, as a suffix for the error: an
 * `http://` one closed before any byte of an answer came may be a port that serves HTTPS (a TLS server closes
 * a plain HTTP request so, as a crashed server does: said as a possibility); an `https://` one closed during
 * the TLS handshake may be a server that requires a client certificate. A close after the handshake is how a
 * hosted API or a load balancer drops a connection: nothing is added. The run is still retried. Empty
 * otherwise.
 */
export function modelClosedHint(err: APICallError): string {
  const text = `${errorText(err)} ${causeMessages(err)}`;
  const said = closedConnection(err.url, text);
  if (said === "http-to-tls" && !answerBegun(err)) return `; ${servesHttps("agent.base_url")}`;
  if (said === "tls-refused" && CLOSED_IN_HANDSHAKE.test(text))
    return `; if it requires a TLS client certificate (mTLS), which svc cannot send to a model endpoint, it closes every connection during the handshake so: ${WITHOUT_CLIENT_CERT}`;
  return "";
}

/** Whether an answer undici could not parse (it quotes it) begins as a TLS record: an alert or a handshake, version 3.x. */
const isTlsRecord = (data: string): boolean =>
  (data.charCodeAt(0) === 0x15 || data.charCodeAt(0) === 0x16) && data.charCodeAt(1) === 0x03;

/**
 * For an `http://` endpoint that answered in TLS (its first bytes a TLS record, which undici could not read
 * as HTTP): the port serves HTTPS. Empty otherwise.
 */
export function modelTlsAnswerHint(err: unknown): string {
  if (!APICallError.isInstance(err) || err.statusCode !== undefined || !/^http:/i.test(err.url)) return "";
  for (let cause = err.cause, depth = 0; depth < 3 && cause instanceof Error; depth++, cause = cause.cause) {
    const data = (cause as { data?: unknown }).data;
    if (typeof data === "string" && isTlsRecord(data))
      return " — the server answered in TLS: it serves HTTPS on this port, write https:// in agent.base_url";
  }
  return "";
}

/** Whether bytes of an answer came before the connection closed (undici's socket counts, where it gives them). */
function answerBegun(err: Error): boolean {
  for (let cause = err.cause, depth = 0; depth < 3 && cause instanceof Error; depth++, cause = cause.cause) {
    const read = (cause as { socket?: { bytesRead?: unknown } }).socket?.bytesRead;
    if (typeof read === "number") return read > 0;
  }
  return false;
}

/** The messages of an error's causes (`other side closed`), which its own message may leave out. */
function causeMessages(err: Error): string {
  const said: string[] = [];
  let cause = err.cause;
  for (let depth = 0; depth < 3 && cause instanceof Error; depth++) {
    said.push(cause.message);
    cause = cause.cause;
  }
  return said.join(" ");
}
