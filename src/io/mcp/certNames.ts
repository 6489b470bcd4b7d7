import { cutText } from "../cutText.js";

/** The most characters of a certificate's names quoted in a message (a CDN's certificate lists hundreds). */
const MAX_NAMES = 300;

/**
 * The host names a server's certificate lists, as a suffix for "write the host name the certificate lists":
 * ` (DNS:llm.corp.example, DNS:gw.corp.example)`, or its subject's ` (CN=llm.corp.example)` when it has no
 * subjectAltName. Node's own message names only the IP addresses for a url with an IP host (`IP: 127.0.0.1
 * is not in the cert's list: `, empty for a certificate of DNS names), so they are read from the
 * certificate Node attaches to the error (`cert`, on the error or one of its causes). Empty when the error
 * carries none.
 */
export function listedNames(err: unknown): string {
  let cause = err;
  for (let depth = 0; depth < 6 && cause instanceof Error; depth++) {
    const cert = (cause as { cert?: unknown }).cert;
    if (cert !== null && typeof cert === "object") return ` (${cutText(namesOf(cert), MAX_NAMES)})`;
    cause = cause.cause;
  }
  return "";
}

function namesOf(cert: { subjectaltname?: unknown; subject?: unknown }): string {
  if (typeof cert.subjectaltname === "string" && cert.subjectaltname.trim() !== "")
    return cert.subjectaltname.trim();
  const cn = (cert.subject as { CN?: unknown } | undefined)?.CN;
  const names = (Array.isArray(cn) ? cn : [cn]).filter((name) => typeof name === "string");
  return names.length === 0 ? "it lists none" : names.map((name) => `CN=${name}`).join(", ");
}
