import { createPrivateKey, X509Certificate } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { McpHub } from "../../../src/actors/mcp/hub.js";
import { type Certs, makeCerts } from "../../fixtures/mcp/certs.js";
import { type FixtureHttp, startStreamableHttp } from "../../fixtures/mcp/httpServers.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { entry, makeHub } from "./harness.js";

/**
 * Spec 5.2 / 7: certificate problems fail at connect with a server-scoped message. Files that exist
 * but are unusable get a message naming the file and the fix, not an OpenSSL code
 * ("DECODER routines::unsupported", "bad decrypt") or a misleading "self-signed certificate".
 */
let home: TempHome;
let certs: Certs;
let mtls: FixtureHttp;
const hubs: McpHub[] = [];

beforeAll(async () => {
  home = tempHome();
  certs = await makeCerts(home.dir);
  mtls = await startStreamableHttp({
    tls: {
      key: certs.read(certs.serverKey),
      cert: certs.read(certs.serverCert),
      ca: certs.read(certs.caCert),
    },
  });
  home.write("not-a-ca.pem", "hello\n");
}, 60_000);
afterAll(async () => {
  await Promise.all(hubs.map((h) => h.stop()));
  await mtls?.close();
  home.cleanup();
});

async function lastError(raw: Record<string, unknown>): Promise<string | undefined> {
  const h = makeHub(home, {
    s: entry({ url: mtls.url, ssl_verify: certs.caCert, connect_timeout: 5, ...raw }),
  });
  hubs.push(h);
  const status = await h.settled("s");
  expect(status.state).toBe("failed");
  return status.lastError;
}

describe("unusable certificate, key and CA files", () => {
  it("a certificate file without its key, and no client_key", async () => {
    expect(await lastError({ client_cert: certs.clientCert })).toBe(
      `mcp_servers.s: client_cert ${certs.clientCert} holds no private key — add it to the file, name the key file with client_key, or use [cert, key]`,
    );
  });

  it("an encrypted key without a password, and with a wrong one", async () => {
    expect(await lastError({ client_cert: [certs.clientCert, certs.clientKeyEncrypted] })).toBe(
      `mcp_servers.s: the private key in ${certs.clientKeyEncrypted} is encrypted — give its password as the third element: client_cert: [cert, key, password]`,
    );
    expect(await lastError({ client_cert: [certs.clientCert, certs.clientKeyEncrypted, "wrong"] })).toBe(
      `mcp_servers.s: the private key in ${certs.clientKeyEncrypted} cannot be decrypted with the configured password (client_cert[2])`,
    );
  });

  it("a wrong key password from .env that holds a ${...} is named by its key only: that text came from .env, and is part of the secret", async () => {
    const env = home.write(".env", "KEY_PASSWORD='Zq${hunter2}99'\n", 0o600);
    try {
      expect(
        await lastError({ client_cert: [certs.clientCert, certs.clientKeyEncrypted, "${KEY_PASSWORD}"] }),
      ).toBe(
        `mcp_servers.s: the private key in ${certs.clientKeyEncrypted} cannot be decrypted with the configured password (client_cert[2])`,
      );
    } finally {
      rmSync(env);
    }
  });

  it("a wrong key password that is part of the server's name, a path or svc's words is not cut out of them: the message is svc's own, quoting no credential", async () => {
    const h = makeHub(home, {
      "corp-internal": entry({
        url: mtls.url,
        ssl_verify: certs.caCert,
        connect_timeout: 5,
        client_cert: [certs.clientCert, certs.clientKeyEncrypted, "internal"],
      }),
      keys: entry({
        url: mtls.url,
        ssl_verify: certs.caCert,
        connect_timeout: 5,
        client_cert: [certs.clientCert, certs.clientKeyEncrypted, "client"],
      }),
    });
    hubs.push(h);
    expect((await h.settled("corp-internal")).lastError).toBe(
      `mcp_servers.corp-internal: the private key in ${certs.clientKeyEncrypted} cannot be decrypted with the configured password (client_cert[2])`,
    );
    expect((await h.settled("keys")).lastError).toBe(
      `mcp_servers.keys: the private key in ${certs.clientKeyEncrypted} cannot be decrypted with the configured password (client_cert[2])`,
    );
  });

  it("a key that belongs to another certificate", async () => {
    expect(await lastError({ client_cert: [certs.clientCert, certs.strangerKey] })).toBe(
      `mcp_servers.s: the private key in ${certs.strangerKey} does not belong to the certificate in ${certs.clientCert}`,
    );
  });

  it("a CA bundle that holds no certificate", async () => {
    expect(
      await lastError({
        ssl_verify: `${home.dir}/not-a-ca.pem`,
        client_cert: [certs.clientCert, certs.clientKey],
      }),
    ).toBe(
      `mcp_servers.s: ssl_verify CA bundle ${home.dir}/not-a-ca.pem holds no PEM certificate (-----BEGIN CERTIFICATE-----)`,
    );
    expect(mtls.requests).toEqual([]);
  });

  it("a CA bundle, certificate or key saved as UTF-16 (PowerShell 5's >) is named so, with how to save it", async () => {
    const utf16 = (path: string, name: string) => {
      const text = certs.read(path);
      writeFileSync(
        join(home.dir, name),
        Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, "utf16le")]),
      );
      return join(home.dir, name);
    };
    const how =
      "it is saved as UTF-16 — save it as UTF-8 (in PowerShell: Set-Content -Encoding utf8, or Out-File -Encoding utf8)";
    const ca = utf16(certs.caCert, "ca-utf16.pem");
    expect(await lastError({ ssl_verify: ca, client_cert: [certs.clientCert, certs.clientKey] })).toBe(
      `mcp_servers.s: ssl_verify CA bundle ${ca} holds no PEM certificate (-----BEGIN CERTIFICATE-----): ${how}`,
    );
    const cert = utf16(certs.clientCert, "client-utf16.crt");
    expect(await lastError({ client_cert: [cert, certs.clientKey] })).toBe(
      `mcp_servers.s: client_cert ${cert} holds no PEM certificate (-----BEGIN CERTIFICATE-----): ${how}`,
    );
    const key = utf16(certs.clientKey, "client-utf16.key");
    expect(await lastError({ client_cert: [certs.clientCert, key] })).toBe(
      `mcp_servers.s: client_cert key ${key} holds no PEM private key: ${how}`,
    );
  });

  it("a CA bundle, certificate or key in binary DER form (a .cer exported from Windows) is named so, with the command that converts it", async () => {
    const der = (path: string, name: string) => {
      writeFileSync(join(home.dir, name), new X509Certificate(certs.read(path)).raw);
      return join(home.dir, name);
    };
    const ca = der(certs.caCert, "corp-ca.cer");
    expect(await lastError({ ssl_verify: ca, client_cert: [certs.clientCert, certs.clientKey] })).toBe(
      `mcp_servers.s: ssl_verify CA bundle ${ca} holds no PEM certificate (-----BEGIN CERTIFICATE-----): it is a certificate in binary DER form — convert it to PEM (openssl x509 -inform der -in ${ca} -out ${ca}.pem) and name the PEM file`,
    );
    const key = join(home.dir, "client-key.der");
    writeFileSync(
      key,
      createPrivateKey(certs.read(certs.clientKey)).export({ format: "der", type: "pkcs8" }),
    );
    expect(await lastError({ client_cert: [certs.clientCert, key] })).toBe(
      `mcp_servers.s: client_cert key ${key} holds no PEM private key: it is a private key in binary DER form — convert it to PEM (openssl pkey -inform der -in ${key} -out ${key}.pem) and name the PEM file`,
    );
    const cert = der(certs.clientCert, "client cert.der");
    expect(await lastError({ client_cert: [cert, certs.clientKey] })).toBe(
      `mcp_servers.s: client_cert ${cert} holds no PEM certificate (-----BEGIN CERTIFICATE-----): it is a certificate in binary DER form — convert it to PEM (openssl x509 -inform der -in <file> -out <file>.pem) and name the PEM file`,
    );
  });

  it("a client certificate given as a PKCS#12 bundle (.p12, .pfx) is named so, with the command that converts it", async () => {
    const p12 = join(home.dir, "me.p12");
    await execa("openssl", [
      "pkcs12",
      "-export",
      "-in",
      certs.clientCert,
      "-inkey",
      certs.clientKey,
      "-out",
      p12,
      "-passout",
      "pass:bundle-pass-p12",
    ]);
    expect(await lastError({ client_cert: p12 })).toBe(
      `mcp_servers.s: client_cert ${p12} holds no PEM certificate (-----BEGIN CERTIFICATE-----): it is a PKCS#12 bundle (binary) — convert it to PEM (openssl pkcs12 -in ${p12} -out ${p12}.pem -nodes) and name the PEM file`,
    );
  });

  it("a directory of certificates named as the CA bundle or a certificate is refused as a directory, saying to name the file", async () => {
    expect(await lastError({ ssl_verify: certs.dir, client_cert: [certs.clientCert, certs.clientKey] })).toBe(
      `mcp_servers.s: ssl_verify CA bundle is a directory, not a PEM file: ${certs.dir} — name the PEM file itself (a bundle of the CAs to trust, such as /etc/ssl/certs/ca-certificates.crt; ssl_verify: true trusts the system's CAs)`,
    );
    expect(await lastError({ client_cert: [certs.dir, certs.clientKey] })).toBe(
      `mcp_servers.s: client_cert is a directory, not a PEM file: ${certs.dir} — name the PEM file itself`,
    );
  });
});
