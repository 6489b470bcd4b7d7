import { APICallError } from "ai";
import { describe, expect, it } from "vitest";
import { describeModelError } from "../../../src/agent/modelError.js";
import { modelTlsHint } from "../../../src/agent/modelTlsHint.js";
import { isRetryable } from "../../../src/agent/retry.js";

/** A connection error as the AI SDK wraps fetch's: `Cannot connect to API: <cause>`, the cause's code kept. */
const failed = (url: string, cause: Error) =>
  new APICallError({
    message: `Cannot connect to API: ${cause.message}`,
    url,
    requestBodyValues: {},
    cause,
    isRetryable: true,
  });
const socketClosed = () => Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" });

describe("a model endpoint that closed the connection without answering", () => {
  it("at an http:// base_url: may be a TLS port, so it says to write https://, and is still retried (a crash looks the same)", () => {
    const url = "http://127.0.0.1:8443/v1/chat/completions";
    const error = failed(url, socketClosed());
    expect(describeModelError(error, [])).toBe(
      `model endpoint ${url} closed the connection without answering (other side closed) — the server, or a proxy in front of it, dropped the request: its log says why (a crash, a restart, a limit of its own); if it serves HTTPS on this port, write https:// in agent.base_url`,
    );
    expect(isRetryable(error)).toBe(true);
  });

  it("at an https:// base_url, after the TLS handshake: how a hosted API or a load balancer drops a connection, so no client-certificate advice; still retried", () => {
    const url = "https://llm.corp.example/v1/chat/completions";
    const error = failed(url, socketClosed());
    expect(describeModelError(error, [])).toBe(
      `model endpoint ${url} closed the connection without answering (other side closed) — the server, or a proxy in front of it, dropped the request: its log says why (a crash, a restart, a limit of its own)`,
    );
    expect(isRetryable(error)).toBe(true);
  });

  it("at an https:// base_url, during the TLS handshake: may be a server requiring a client certificate, which svc cannot send; still retried", () => {
    const cause = Object.assign(
      new Error("Client network socket disconnected before secure TLS connection was established"),
      { code: "ECONNRESET" },
    );
    const error = failed("https://llm.corp.example/v1/chat/completions", cause);
    expect(describeModelError(error, [])).toMatch(
      /its log says why \(a crash, a restart, a limit of its own\); if it requires a TLS client certificate \(mTLS\), which svc cannot send to a model endpoint, it closes every connection during the handshake so: let it take svc's requests without one, or put a proxy in front of it that presents one$/,
    );
    expect(isRetryable(error)).toBe(true);
  });

  it("a handshake refused with an alert only a client certificate brings names the client certificate, and is not retried", () => {
    const alert = Object.assign(
      new Error(
        "80DC2C48D17F0000:error:0A00045C:SSL routines:ssl3_read_bytes:tlsv13 alert certificate required:../deps/openssl/openssl/ssl/record/rec_layer_s3.c:1601:SSL alert number 116",
      ),
      { code: "ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED" },
    );
    const error = failed("https://llm.corp.example/v1/chat/completions", alert);
    expect(describeModelError(error, [])).toMatch(
      / — the server refused the TLS handshake, as one does that requires a client certificate \(mTLS\), which svc cannot send to a model endpoint: let it take svc's requests without one, or put a proxy in front of it that presents one$/,
    );
    expect(isRetryable(error)).toBe(false);
  });

  it("a handshake refused with 'handshake failure' names both of its causes (no TLS version or cipher in common, a client certificate), and is not retried: a retry changes neither", () => {
    const alert = Object.assign(
      new Error(
        "800CB03F377F0000:error:0A000410:SSL routines:ssl3_read_bytes:sslv3 alert handshake failure:../deps/openssl/openssl/ssl/record/rec_layer_s3.c:1601:SSL alert number 40",
      ),
      { code: "ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE" },
    );
    const error = failed("https://llm.corp.example/v1/chat/completions", alert);
    expect(describeModelError(error, [])).toMatch(
      / — the server refused the TLS handshake: either it has no TLS version or cipher in common with svc, which speaks TLS 1\.2 and 1\.3 \(AES-GCM and ChaCha20 ciphers among others\): let the server offer those; or it requires a client certificate \(mTLS\), which svc cannot send to a model endpoint: let it take svc's requests without one, or put a proxy in front of it that presents one$/,
    );
    expect(isRetryable(error)).toBe(false);
  });
});

describe("modelTlsHint", () => {
  const tls = "https://127.0.0.1:8443/v1/chat/completions";

  it("a certificate for another host names the hosts it lists (Node's message names none for an IP host)", () => {
    const wrongHost = Object.assign(
      new Error(
        "Hostname/IP does not match certificate's altnames: IP: 127.0.0.1 is not in the cert's list: ",
      ),
      {
        code: "ERR_TLS_CERT_ALTNAME_INVALID",
        cert: { subjectaltname: "DNS:other.example, DNS:gw.example", subject: { CN: "other.example" } },
      },
    );
    expect(modelTlsHint(failed(tls, wrongHost), {})).toBe(
      " — its TLS certificate does not name the host of agent.base_url: write the host name the certificate lists (DNS:other.example, DNS:gw.example) in agent.base_url, or give the server a certificate for this host",
    );
    // Without subjectAltName, its subject's common name; without the certificate, as before.
    const cnOnly = Object.assign(new Error(wrongHost.message), {
      code: wrongHost.code,
      cert: { subject: { CN: "llm.example" } },
    });
    expect(modelTlsHint(failed(tls, cnOnly), {})).toContain("the certificate lists (CN=llm.example) in");
    const bare = Object.assign(new Error(wrongHost.message), { code: wrongHost.code });
    expect(modelTlsHint(failed(tls, bare), {})).toContain("the certificate lists in agent.base_url");
  });

  it("an untrusted certificate names a set SSL_CERT_FILE or NODE_EXTRA_CA_CERTS that could not be used", () => {
    const untrusted = failed(
      tls,
      Object.assign(new Error("unable to verify the first certificate"), {
        code: "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
      }),
    );
    const missing = `${import.meta.dirname}/no-such-bundle.pem`;
    expect(modelTlsHint(untrusted, { SSL_CERT_FILE: missing })).toBe(
      ` — its TLS certificate is not issued by a CA this system trusts (a private or self-signed CA), and SSL_CERT_FILE (${missing}) could not be read: ENOENT: no such file or directory — point SSL_CERT_FILE at a readable PEM file holding that CA`,
    );
    // A directory where the file belongs.
    expect(modelTlsHint(untrusted, { NODE_EXTRA_CA_CERTS: import.meta.dirname })).toBe(
      ` — its TLS certificate is not issued by a CA this system trusts (a private or self-signed CA), and NODE_EXTRA_CA_CERTS (${import.meta.dirname}) could not be read: EISDIR: illegal operation on a directory — point NODE_EXTRA_CA_CERTS at a readable PEM file holding that CA`,
    );
    expect(modelTlsHint(untrusted, {})).toMatch(
      /: add that CA to the system trust store \(update-ca-certificates\), or start svc with SSL_CERT_FILE or NODE_EXTRA_CA_CERTS set to its PEM file$/,
    );
  });
});
