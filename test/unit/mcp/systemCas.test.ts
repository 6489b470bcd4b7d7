import { rootCertificates } from "node:tls";
import { describe, expect, it } from "vitest";
import { SYSTEM_CA_BUNDLES, secureContextFor, systemCaCertificates } from "../../../src/io/mcp/systemCas.js";

const PEM = (name: string) => `-----BEGIN CERTIFICATE-----\n${name}\n-----END CERTIFICATE-----\n`;
const files =
  (map: Record<string, string>) =>
  (path: string): string | undefined =>
    map[path];

describe("ssl_verify: true trusts the system CAs", () => {
  it("adds SSL_CERT_FILE (and NODE_EXTRA_CA_CERTS) to Node's own list", () => {
    const read = files({
      "/corp.pem": PEM("corp"),
      "/extra.pem": PEM("extra"),
      [SYSTEM_CA_BUNDLES[0]]: PEM("os"),
    });
    const cas = systemCaCertificates({ SSL_CERT_FILE: "/corp.pem", NODE_EXTRA_CA_CERTS: "/extra.pem" }, read);
    expect(cas?.slice(rootCertificates.length)).toEqual([PEM("corp"), PEM("extra")]);
    expect(cas?.slice(0, rootCertificates.length)).toEqual([...rootCertificates]);
  });

  it("else the distribution's bundle: the first one that can be read", () => {
    const read = files({ [SYSTEM_CA_BUNDLES[1]]: PEM("rhel"), [SYSTEM_CA_BUNDLES[5]]: PEM("alpine") });
    expect(systemCaCertificates({}, read)?.slice(rootCertificates.length)).toEqual([PEM("rhel")]);
  });

  it("without a system bundle (or an unreadable SSL_CERT_FILE) Node's defaults stand", () => {
    expect(systemCaCertificates({}, files({}))).toBeUndefined();
    const read = files({ [SYSTEM_CA_BUNDLES[0]]: PEM("os") });
    expect(systemCaCertificates({ SSL_CERT_FILE: "/missing.pem" }, read)).toBeUndefined();
    expect(systemCaCertificates({}, files({ [SYSTEM_CA_BUNDLES[0]]: "not a PEM" }))).toBeUndefined();
  });

  it("one TLS context per CA list: Node would parse the few hundred certificates again for each connection", () => {
    const ca = rootCertificates.slice(0, 2);
    expect(secureContextFor({ ca })).toBe(secureContextFor({ ca: rootCertificates.slice(0, 2) }));
    expect(secureContextFor({ ca: rootCertificates.slice(0, 1) })).not.toBe(secureContextFor({ ca }));
  });
});
