import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { McpHub } from "../../../src/actors/mcp/hub.js";
import { type Certs, makeCerts } from "../../fixtures/mcp/certs.js";
import { type FixtureHttp, startSse, startStreamableHttp } from "../../fixtures/mcp/httpServers.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { entry, makeHub, text } from "./harness.js";

let home: TempHome;
let certs: Certs;
let mtls: FixtureHttp;
let plainTls: FixtureHttp;
let mtlsSse: FixtureHttp;
let plainHttp: FixtureHttp;
let otherHost: FixtureHttp;
/** A TLS 1.2 server whose only cipher Node's client does not offer, and a TLS 1.2 one requiring mTLS. */
let narrowTls: FixtureHttp;
let mtls12: FixtureHttp;
const hubs: McpHub[] = [];

beforeAll(async () => {
  home = tempHome();
  certs = await makeCerts(home.dir);
  const key = certs.read(certs.serverKey);
  const cert = certs.read(certs.serverCert);
  mtls = await startStreamableHttp({ tls: { key, cert, ca: certs.read(certs.caCert) } });
  plainTls = await startStreamableHttp({ tls: { key, cert } });
  mtlsSse = await startSse({ tls: { key, cert, ca: certs.read(certs.caCert) } });
  plainHttp = await startStreamableHttp();
  otherHost = await startStreamableHttp({
    tls: { key: certs.read(certs.otherHostKey), cert: certs.read(certs.otherHostCert) },
  });
  narrowTls = await startStreamableHttp({
    tls: { key, cert, maxVersion: "TLSv1.2", ciphers: "ECDHE-ECDSA-CAMELLIA256-SHA384" },
  });
  mtls12 = await startStreamableHttp({
    tls: { key, cert, ca: certs.read(certs.caCert), maxVersion: "TLSv1.2" },
  });
}, 60_000);
afterAll(async () => {
  await Promise.all(hubs.map((h) => h.stop()));
  await Promise.all([
    mtls?.close(),
    plainTls?.close(),
    mtlsSse?.close(),
    plainHttp?.close(),
    otherHost?.close(),
    narrowTls?.close(),
    mtls12?.close(),
  ]);
  home.cleanup();
});

async function connect(raw: Record<string, unknown>) {
  const h = makeHub(home, { s: entry(raw) });
  hubs.push(h);
  return { hub: h, status: await h.settled("s") };
}

describe("TLS: ssl_verify and client certificates (spec 2.1, 5.2)", () => {
  it("ssl_verify: <CA bundle> trusts a private CA; the default (system CAs) refuses it", async () => {
    const ok = await connect({ url: plainTls.url, ssl_verify: certs.caCert });
    expect(ok.status.state).toBe("connected");
    expect(text(await ok.hub.call("s", "echo", { text: "tls" }))).toBe("tls");
    const refused = await connect({ url: plainTls.url, skip_preflight: true, connect_timeout: 5 });
    expect(refused.status.state).toBe("failed");
    expect(refused.status.lastError).toMatch(/unable to verify the first certificate/);
    // What OpenSSL said, then which key fixes it.
    expect(refused.status.lastError).toMatch(
      /— the server's certificate is not issued by a CA this system trusts \(a private or self-signed CA\): set mcp_servers\.s\.ssl_verify to the PEM bundle of that CA \(or ssl_verify: false to skip verification\)$/,
    );
  });

  it("the default (ssl_verify: true) trusts a CA of the system trust store (SSL_CERT_FILE), as OpenSSL does", async () => {
    const saved = process.env.SSL_CERT_FILE;
    process.env.SSL_CERT_FILE = certs.caCert;
    try {
      const ok = await connect({ url: plainTls.url, connect_timeout: 5 });
      expect(ok.status.state).toBe("connected");
      expect(text(await ok.hub.call("s", "echo", { text: "system" }))).toBe("system");
      // With a client certificate (mTLS) too.
      const mutual = await connect({
        url: mtls.url,
        client_cert: [certs.clientCert, certs.clientKeyEncrypted, certs.password],
      });
      expect(mutual.status.state).toBe("connected");
    } finally {
      if (saved === undefined) delete process.env.SSL_CERT_FILE;
      else process.env.SSL_CERT_FILE = saved;
    }
  });

  it("ssl_verify: false skips verification", async () => {
    expect((await connect({ url: plainTls.url, ssl_verify: false })).status.state).toBe("connected");
  });

  it("mTLS accepted with [cert, key], [cert, key, password] and a combined PEM", async () => {
    const pair = await connect({
      url: mtls.url,
      ssl_verify: certs.caCert,
      client_cert: [certs.clientCert, certs.clientKey],
    });
    expect(pair.status.state).toBe("connected");
    const encrypted = await connect({
      url: mtls.url,
      ssl_verify: certs.caCert,
      client_cert: [certs.clientCert, certs.clientKeyEncrypted, certs.password],
    });
    expect(encrypted.status.state).toBe("connected");
    const combined = await connect({
      url: mtls.url,
      ssl_verify: certs.caCert,
      client_cert: certs.clientCombined,
    });
    expect(combined.status.state).toBe("connected");
    const separateKey = await connect({
      url: mtls.url,
      ssl_verify: certs.caCert,
      client_cert: certs.clientCert,
      client_key: certs.clientKey,
    });
    expect(separateKey.status.state).toBe("connected");
    expect(text(await separateKey.hub.call("s", "echo", { text: "mutual" }))).toBe("mutual");
  });

  it("mTLS refused without a client certificate or with one from another CA", async () => {
    const none = await connect({
      url: mtls.url,
      ssl_verify: certs.caCert,
      skip_preflight: true,
      connect_timeout: 5,
    });
    expect(none.status.state).toBe("failed");
    expect(none.status.lastError).toMatch(/^mcp_servers\.s: fetch failed: /);
    expect(none.status.lastError).toMatch(
      /if it requires a client certificate \(mTLS\), set mcp_servers\.s\.client_cert$/,
    );
    const stranger = await connect({
      url: mtls.url,
      ssl_verify: certs.caCert,
      skip_preflight: true,
      connect_timeout: 5,
      client_cert: [certs.strangerCert, certs.strangerKey],
    });
    expect(stranger.status.state).toBe("failed");
    expect(stranger.status.lastError).toMatch(/^mcp_servers\.s: fetch failed: /);
  });

  it("SSE (transport: sse) uses the same CA bundle and client certificate; refused without them", async () => {
    const base = { url: mtlsSse.url, transport: "sse", skip_preflight: true, connect_timeout: 5 };
    const ok = await connect({
      ...base,
      ssl_verify: certs.caCert,
      client_cert: [certs.clientCert, certs.clientKey],
    });
    expect(ok.status.state).toBe("connected");
    expect(text(await ok.hub.call("s", "echo", { text: "sse over mtls" }))).toBe("sse over mtls");
    const noCert = await connect({ ...base, ssl_verify: certs.caCert });
    expect(noCert.status.state).toBe("failed");
    const missing = await connect({ ...base, client_cert: [`${certs.dir}/gone.crt`, certs.clientKey] });
    expect(missing.status.lastError).toBe(`mcp_servers.s: client_cert file not found: ${certs.dir}/gone.crt`);
  });

  it("a TLS failure reads the same on SSE as on Streamable HTTP, OpenSSL's code included", async () => {
    const base = { skip_preflight: true, connect_timeout: 5 };
    const untrusted = {
      http: await connect({ ...base, url: mtls.url }),
      sse: await connect({ ...base, url: mtlsSse.url, transport: "sse" }),
    };
    expect(untrusted.http.status.lastError).toMatch(
      /^mcp_servers\.s: fetch failed: self-signed certificate in certificate chain \(SELF_SIGNED_CERT_IN_CHAIN\) — the server's certificate is not issued by a CA this system trusts/,
    );
    expect(untrusted.sse.status.lastError).toBe(untrusted.http.status.lastError);
    // An mTLS server refusing a connection without a client certificate.
    const refused = {
      http: await connect({ ...base, url: mtls.url, ssl_verify: certs.caCert }),
      sse: await connect({ ...base, url: mtlsSse.url, transport: "sse", ssl_verify: certs.caCert }),
    };
    expect(refused.http.status.lastError).toMatch(
      /^mcp_servers\.s: fetch failed: other side closed \(UND_ERR_SOCKET\) — /,
    );
    expect(refused.sse.status.lastError).toBe(refused.http.status.lastError);
  });

  it("an https:// url at a plain HTTP port: one line, OpenSSL's code and the hint, not its raw record", async () => {
    const url = plainHttp.url.replace(/^http:/, "https:");
    for (const raw of [{ url }, { url, transport: "sse" }, { url, skip_preflight: true }]) {
      const { lastError } = (await connect({ ...raw, connect_timeout: 5 })).status;
      expect(lastError).toMatch(
        /^mcp_servers\.s: (?:SSE error: )?fetch failed: ERR_SSL_WRONG_VERSION_NUMBER — the server does not speak TLS on this port \(a plain HTTP server answered\): write http:\/\/ in mcp_servers\.s\.url, or the port where it serves HTTPS$/,
      );
    }
  });

  it("a handshake refused with 'handshake failure' names both causes: a server with no cipher in common (no client certificate asked) and a TLS 1.2 one requiring a client certificate send it alike", async () => {
    const bothCauses =
      " — the server refused the TLS handshake: either it has no TLS version or cipher in common with svc, which speaks TLS 1.2 and 1.3 (AES-GCM and ChaCha20 ciphers among others): let the server offer those; or it requires a client certificate (mTLS): set mcp_servers.s.client_cert";
    for (const raw of [
      { url: narrowTls.url },
      { url: narrowTls.url, transport: "sse" },
      { url: narrowTls.url, skip_preflight: true },
      { url: mtls12.url, ssl_verify: certs.caCert },
    ]) {
      const { lastError } = (await connect({ ...raw, connect_timeout: 5 })).status;
      expect(lastError).toMatch(
        /^mcp_servers\.s: (?:SSE error: )?fetch failed: ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE — /,
      );
      expect(lastError?.slice(lastError.indexOf(" — "))).toBe(bothCauses);
    }
    // With a client certificate set, the second cause is that the server refused it.
    const { lastError } = (
      await connect({
        url: narrowTls.url,
        ssl_verify: certs.caCert,
        client_cert: [certs.clientCert, certs.clientKey],
        connect_timeout: 5,
      })
    ).status;
    expect(lastError).toMatch(
      /: let the server offer those; or it refused svc's client certificate: check that mcp_servers\.s\.client_cert is issued by a CA the server trusts$/,
    );
    // The TLS 1.2 server takes a client certificate its CA issued.
    const mutual = await connect({
      url: mtls12.url,
      ssl_verify: certs.caCert,
      client_cert: [certs.clientCert, certs.clientKey],
    });
    expect(mutual.status.state).toBe("connected");
  });

  it("a certificate for another host names the hosts it lists, which Node's message leaves out for an IP url", async () => {
    const { lastError } = (
      await connect({
        url: otherHost.url,
        ssl_verify: certs.caCert,
        skip_preflight: true,
        connect_timeout: 5,
      })
    ).status;
    expect(lastError).toMatch(/IP: 127\.0\.0\.1 is not in the cert's list:/);
    expect(lastError).toMatch(
      / — the server's certificate does not name the url's host: write the host name the certificate lists \(DNS:other\.example\) in mcp_servers\.s\.url, or give the server a certificate for this host$/,
    );
  });

  it("a missing certificate or CA file fails fast with a server-scoped message", async () => {
    const missingCert = await connect({
      url: mtls.url,
      client_cert: [`${certs.dir}/nope.crt`, certs.clientKey],
    });
    expect(missingCert.status.lastError).toBe(
      `mcp_servers.s: client_cert file not found: ${certs.dir}/nope.crt`,
    );
    const missingCa = await connect({ url: mtls.url, ssl_verify: `${certs.dir}/nope-ca.pem` });
    expect(missingCa.status.lastError).toBe(
      `mcp_servers.s: ssl_verify CA bundle file not found: ${certs.dir}/nope-ca.pem`,
    );
    expect(mtls.requests.filter((r) => r.includes("nope"))).toEqual([]);
  });
});
