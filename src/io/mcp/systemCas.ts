import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createSecureContext, rootCertificates, type SecureContext } from "node:tls";

/**
 * Where the system trust store is kept as one PEM bundle (the paths Go's crypto/x509 reads): Debian,
 * Ubuntu, Arch; Fedora, RHEL; openSUSE; OpenELEC; CentOS/RHEL 7+; Alpine and macOS.
 */
export const SYSTEM_CA_BUNDLES = [
  "/etc/ssl/certs/ca-certificates.crt",
  "/etc/pki/tls/certs/ca-bundle.crt",
  "/etc/ssl/ca-bundle.pem",
  "/etc/pki/tls/cacert.pem",
  "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
  "/etc/ssl/cert.pem",
] as const;

type Read = (path: string) => string | undefined;

const readPemFile: Read = (path) => {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
};

function firstReadable(read: Read): string | undefined {
  for (const path of SYSTEM_CA_BUNDLES) {
    const pem = read(path);
    if (pem !== undefined) return pem;
  }
  return undefined;
}

/**
 * The CAs `ssl_verify: true` trusts: the system's. Node.js verifies against its own built-in copy of
 * Mozilla's list only, which leaves out a CA the administrator added to the system trust store (a
 * company CA installed with update-ca-certificates) and `SSL_CERT_FILE`, where OpenSSL, curl and Python
 * look. So the list is Node's own, the system bundle (`SSL_CERT_FILE` when set, else the first
 * bundle of SYSTEM_CA_BUNDLES that can be read) and `NODE_EXTRA_CA_CERTS` (which a `ca` option would
 * otherwise drop). Undefined when there is no system bundle: Node's defaults stand.
 */
export function systemCaCertificates(
  env: Readonly<Record<string, string | undefined>> = process.env,
  read: Read = readPemFile,
): string[] | undefined {
  const file = env.SSL_CERT_FILE;
  const bundle = file !== undefined && file !== "" ? read(file) : firstReadable(read);
  if (bundle === undefined || !bundle.includes("-----BEGIN CERTIFICATE-----")) return undefined;
  const extra = env.NODE_EXTRA_CA_CERTS ? read(env.NODE_EXTRA_CA_CERTS) : undefined;
  return [...rootCertificates, bundle, ...(extra === undefined ? [] : [extra])];
}

let shared: { key: string; context: SecureContext } | undefined;

/**
 * The TLS context of a connection's options with a CA list. Node parses every certificate of a `ca`
 * option again for each connection, about a tenth of a second for the system's few hundred, so the
 * context is made once: per Agent with a client certificate, else once for the process per CA list.
 */
export function secureContextFor(options: {
  readonly ca: readonly string[];
  readonly cert?: Buffer;
  readonly key?: Buffer;
  readonly passphrase?: string;
}): SecureContext {
  const ca = [...options.ca];
  if (options.cert !== undefined || options.key !== undefined) return createSecureContext({ ...options, ca });
  const key = createHash("sha256").update(ca.join("\n")).digest("hex");
  if (shared?.key !== key) shared = { key, context: createSecureContext({ ca }) };
  return shared.context;
}
