/**
 * Node's codes for a platform's TLS certificate it does not accept (expired, self-signed, from a CA this
 * system does not trust, issued for another name): no retry changes them.
 */
const CERTIFICATE_CODE =
  /^(?:CERT_\w+|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_\w+|ERR_TLS_CERT_ALTNAME_INVALID)$/;

/**
 * What a connection refused for the server's certificate (or for speaking no TLS at all) says, with what to
 * change; undefined for any other failure (a refused connection, a reset), which may pass.
 */
export function certificateRefusal(code: string | undefined): string | undefined {
  // A plain HTTP server answered the TLS handshake (an `https://` base_url on an `http://` port).
  if (code === "ERR_SSL_WRONG_VERSION_NUMBER")
    return `the server does not speak TLS on this port (${code}) — not retried; write http:// in base_url, or the port where it serves HTTPS`;
  if (code === undefined || !CERTIFICATE_CODE.test(code)) return undefined;
  if (code === "CERT_HAS_EXPIRED" || code === "CERT_NOT_YET_VALID")
    return `the server's TLS certificate is out of date (${code}) — not retried; renew it on the server`;
  if (code === "ERR_TLS_CERT_ALTNAME_INVALID")
    return `the server's TLS certificate does not name the host of base_url (${code}) — not retried; write the host name the certificate lists in base_url, or give the server a certificate for this host`;
  return `the server's TLS certificate is not trusted (${code}) — not retried; a certificate of a private or self-signed CA is trusted once that CA is in the system trust store (update-ca-certificates), or with svc started with SSL_CERT_FILE or NODE_EXTRA_CA_CERTS set to its PEM file`;
}
