import { describe, expect, it } from "vitest";
import { caFileProblems, caFileWarning } from "../../../src/io/mcp/caFileProblems.js";

const PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
const files =
  (map: Record<string, string>) =>
  (path: string): string => {
    const text = map[path];
    if (text === undefined)
      throw Object.assign(new Error(`ENOENT: no such file or directory, open '${path}'`), { code: "ENOENT" });
    return text;
  };

describe("SSL_CERT_FILE and NODE_EXTRA_CA_CERTS that svc cannot use", () => {
  it("names a file that cannot be read (the read error without the path again) or holds no PEM certificate", () => {
    const read = files({ "/empty.pem": "", "/ca.pem": PEM });
    expect(caFileProblems({ SSL_CERT_FILE: "/gone.pem", NODE_EXTRA_CA_CERTS: "/empty.pem" }, read)).toEqual([
      {
        variable: "SSL_CERT_FILE",
        path: "/gone.pem",
        problem: "could not be read: ENOENT: no such file or directory",
      },
      {
        variable: "NODE_EXTRA_CA_CERTS",
        path: "/empty.pem",
        problem: "holds no PEM certificate (-----BEGIN CERTIFICATE-----)",
      },
    ]);
    expect(caFileProblems({ SSL_CERT_FILE: "/ca.pem", NODE_EXTRA_CA_CERTS: "/ca.pem" }, read)).toEqual([]);
    // Unset or empty: nothing to say.
    expect(caFileProblems({ SSL_CERT_FILE: "" }, read)).toEqual([]);
  });

  it("the warning says what is left out: an unusable SSL_CERT_FILE takes the distribution's bundle with it", () => {
    const [ssl, extra] = caFileProblems(
      { SSL_CERT_FILE: "/gone.pem", NODE_EXTRA_CA_CERTS: "/gone.pem" },
      files({}),
    );
    expect(ssl && caFileWarning(ssl)).toBe(
      "SSL_CERT_FILE (/gone.pem) could not be read: ENOENT: no such file or directory — TLS connections (model endpoints, MCP servers, delivery targets, Redis) trust neither its CAs nor the distribution's bundle it stands in for, only Node.js's own list and NODE_EXTRA_CA_CERTS: point SSL_CERT_FILE at a readable PEM file, or unset it",
    );
    expect(extra && caFileWarning(extra)).toBe(
      "NODE_EXTRA_CA_CERTS (/gone.pem) could not be read: ENOENT: no such file or directory — TLS connections (model endpoints, MCP servers, delivery targets, Redis) do not trust its CAs: point NODE_EXTRA_CA_CERTS at a readable PEM file, or unset it",
    );
  });
});
