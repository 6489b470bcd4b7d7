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
});
