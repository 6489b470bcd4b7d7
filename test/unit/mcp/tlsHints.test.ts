import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { tlsConnectOptions } from "../../../src/io/mcp/tlsFetch.js";
import { tlsHint } from "../../../src/io/mcp/tlsHints.js";

/** A TLS failure at connect names the key that fixes it (ssl_verify, url, client_cert), not only OpenSSL's words. */
describe("tlsHint", () => {
  const url = "https://mcp.corp.local/mcp";

  it("a certificate no system CA trusts: set ssl_verify to the CA bundle (or false)", () => {
    for (const text of [
      "fetch failed: unable to verify the first certificate (UNABLE_TO_VERIFY_LEAF_SIGNATURE)",
      "fetch failed: self-signed certificate in certificate chain (SELF_SIGNED_CERT_IN_CHAIN)",
      "SSE error: TypeError: fetch failed: self signed certificate",
      "fetch failed: unable to get local issuer certificate (UNABLE_TO_GET_ISSUER_CERT_LOCALLY)",
    ]) {
      expect(tlsHint("corp", text, { url, ssl_verify: true })).toBe(
        " — the server's certificate is not issued by a CA this system trusts (a private or self-signed CA): set mcp_servers.corp.ssl_verify to the PEM bundle of that CA (or ssl_verify: false to skip verification)",
      );
    }
  });

  it("with a CA bundle configured, names the bundle that did not verify it", () => {
    expect(
      tlsHint("corp", "fetch failed: unable to verify the first certificate", {
        url,
        ssl_verify: "/etc/ssl/other.pem",
      }),
    ).toBe(
      " — the CA bundle in mcp_servers.corp.ssl_verify (/etc/ssl/other.pem) did not verify the server's certificate: point ssl_verify at the PEM bundle of the CA that issued it",
    );
  });

  it("a certificate for another host, and one out of date", () => {
    expect(
      tlsHint(
        "corp",
        "fetch failed: Hostname/IP does not match certificate's altnames: IP: 10.0.0.5 is not in the cert's list: 127.0.0.1 (ERR_TLS_CERT_ALTNAME_INVALID)",
        { url, ssl_verify: true },
      ),
    ).toMatch(/ — the server's certificate does not name the url's host: .*mcp_servers\.corp\.url/);
    expect(
      tlsHint("corp", "fetch failed: certificate has expired (CERT_HAS_EXPIRED)", { url, ssl_verify: true }),
    ).toMatch(/ — the server's certificate is out of date: renew it on the server/);
  });

  it("a TLS connection the server closed (an mTLS server refusing the client): client_cert", () => {
    const text = "fetch failed: other side closed (UND_ERR_SOCKET)";
    expect(tlsHint("corp", text, { url, ssl_verify: true })).toBe(
      " — the server closed the TLS connection: if it requires a client certificate (mTLS), set mcp_servers.corp.client_cert",
    );
    expect(tlsHint("corp", text, { url, ssl_verify: true, client_cert: ["/c.crt", "/c.key"] })).toMatch(
      /if it refused svc's client certificate, check that mcp_servers\.corp\.client_cert is issued by a CA the server trusts$/,
    );
  });

  it("a certificate for another host names the hosts it lists, from the certificate on the connect's error", () => {
    const text =
      "fetch failed: Hostname/IP does not match certificate's altnames: IP: 10.0.0.5 is not in the cert's list:  (ERR_TLS_CERT_ALTNAME_INVALID)";
    const err = new TypeError("fetch failed", {
      cause: Object.assign(new Error("Hostname/IP does not match"), {
        cert: { subjectaltname: "DNS:mcp.corp.local" },
      }),
    });
    expect(tlsHint("corp", text, { url, ssl_verify: true }, err)).toBe(
      " — the server's certificate does not name the url's host: write the host name the certificate lists (DNS:mcp.corp.local) in mcp_servers.corp.url, or give the server a certificate for this host",
    );
  });

  it("a handshake refused with 'handshake failure' names both of its causes: no TLS version or cipher in common, or a client certificate", () => {
    const text =
      "fetch failed: 800CB03F377F0000:error:0A000410:SSL routines:ssl3_read_bytes:sslv3 alert handshake failure:../deps/openssl/openssl/ssl/record/rec_layer_s3.c:1601:SSL alert number 40 (ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE)";
    expect(tlsHint("corp", text, { url, ssl_verify: true })).toBe(
      " — the server refused the TLS handshake: either it has no TLS version or cipher in common with svc, which speaks TLS 1.2 and 1.3 (AES-GCM and ChaCha20 ciphers among others): let the server offer those; or it requires a client certificate (mTLS): set mcp_servers.corp.client_cert",
    );
    expect(tlsHint("corp", text, { url, ssl_verify: true, client_cert: ["/c.crt", "/c.key"] })).toMatch(
      /: let the server offer those; or it refused svc's client certificate: check that mcp_servers\.corp\.client_cert is issued by a CA the server trusts$/,
    );
  });

  it("an alert only a client certificate brings (TLS 1.3's 'certificate required', 'bad certificate'): client_cert alone", () => {
    for (const text of [
      "fetch failed: 80DC2C48D17F0000:error:0A00045C:SSL routines:ssl3_read_bytes:tlsv13 alert certificate required:../deps/openssl/openssl/ssl/record/rec_layer_s3.c:1601:SSL alert number 116 (ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED)",
      "fetch failed: 80DC2C48D17F0000:error:0A000412:SSL routines:ssl3_read_bytes:sslv3 alert bad certificate:../deps/openssl/openssl/ssl/record/rec_layer_s3.c:1601:SSL alert number 42 (ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE)",
    ])
      expect(tlsHint("corp", text, { url, ssl_verify: true })).toBe(
        " — the server closed the TLS connection: if it requires a client certificate (mTLS), set mcp_servers.corp.client_cert",
      );
  });

  it("an https:// url at a plain HTTP server: OpenSSL's 'wrong version number' names url's scheme", () => {
    const text =
      "fetch failed: 80FC837BF87F0000:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:../deps/openssl/openssl/ssl/record/ssl3_record.c:350: (ERR_SSL_WRONG_VERSION_NUMBER)";
    expect(tlsHint("corp", text, { url, ssl_verify: true })).toBe(
      " — the server does not speak TLS on this port (a plain HTTP server answered): write http:// in mcp_servers.corp.url, or the port where it serves HTTPS",
    );
  });

  it("an http:// url whose server closed the connection unanswered (a TLS server sent plain HTTP): https://", () => {
    const plain = { url: "http://127.0.0.1:9/mcp", ssl_verify: true } as const;
    for (const text of [
      "fetch failed: other side closed (UND_ERR_SOCKET)",
      "SSE error: TypeError: fetch failed: other side closed",
    ])
      expect(tlsHint("corp", text, plain)).toBe(
        " — the server closed the connection without answering: if it serves HTTPS on this port, write https:// in mcp_servers.corp.url",
      );
  });

  it("nothing for other failures", () => {
    expect(tlsHint("corp", "fetch failed: connect ECONNREFUSED 127.0.0.1:9", { url, ssl_verify: true })).toBe(
      "",
    );
    expect(
      tlsHint("corp", "fetch failed: connect ECONNREFUSED 127.0.0.1:9", {
        url: "http://127.0.0.1:9/mcp",
        ssl_verify: true,
      }),
    ).toBe("");
  });
});

describe("ssl_verify written as text", () => {
  it('"false" (quoted, or from a variable) is a CA bundle path; when there is no such file the error says how to write the switch', () => {
    expect(() => tlsConnectOptions("corp", { ssl_verify: "false" })).toThrow(
      `mcp_servers.corp: ssl_verify CA bundle file not found: false — a text value of ssl_verify is a CA bundle path; to turn verification off, write ssl_verify: false without quotes (not through $\{VAR})`,
    );
    expect(() => tlsConnectOptions("corp", { ssl_verify: "/nowhere/ca.pem" })).toThrow(
      /^mcp_servers\.corp: ssl_verify CA bundle file not found: \/nowhere\/ca\.pem$/,
    );
  });
});

describe("a TLS path or key password holding a variable nothing set", () => {
  const dir = mkdtempSync(join(tmpdir(), "svc-tls-unset-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("a missing file says the variable is not set and where to set it, as command does", () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
    expect(() => tlsConnectOptions("corp", { ssl_verify: "${CA_BUNDLE}" })).toThrow(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
      "mcp_servers.corp: ssl_verify CA bundle file not found: ${CA_BUNDLE} — ${CA_BUNDLE} is not set, so the path was used as written — add CA_BUNDLE=... to the profile's .env or the environment",
    );
    expect(() =>
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
      tlsConnectOptions("corp", { ssl_verify: true, client_cert: ["${CERTS}/me.crt", "${input:key}"] }),
    ).toThrow(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
      "mcp_servers.corp: client_cert file not found: ${CERTS}/me.crt — ${CERTS} is not set, so the path was used as written — add CERTS=... to the profile's .env or the environment",
    );
  });

  it("an encrypted key whose password is such a variable: the password was used as written (never shown)", () => {
    const { privateKey } = generateKeyPairSync("ec", {
      namedCurve: "P-256",
      privateKeyEncoding: { type: "pkcs8", format: "pem", cipher: "aes-256-cbc", passphrase: "right-one" },
      publicKeyEncoding: { type: "spki", format: "pem" },
    });
    const key = join(dir, "me.key");
    const cert = join(dir, "me.crt");
    writeFileSync(key, privateKey);
    writeFileSync(cert, "-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n");
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
    const unset = "${KEY_PASSWORD}";
    expect(() => tlsConnectOptions("corp", { ssl_verify: true, client_cert: [cert, key, unset] })).toThrow(
      `mcp_servers.corp: the private key in ${key} cannot be decrypted with the configured password (client_cert[2]) — ${unset} is not set, so the password was used as written — add KEY_PASSWORD=... to the profile's .env or the environment`,
    );
    expect(() => tlsConnectOptions("corp", { ssl_verify: true, client_cert: [cert, key, "wrong"] })).toThrow(
      /cannot be decrypted with the configured password \(client_cert\[2\]\)$/,
    );
  });
});
