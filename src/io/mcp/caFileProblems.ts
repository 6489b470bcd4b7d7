import { readFileSync } from "node:fs";

/** The variables that name a file of CAs to trust (systemCas.ts). */
const CA_FILE_VARIABLES = ["SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS"] as const;

export interface CaFileProblem {
  readonly variable: (typeof CA_FILE_VARIABLES)[number];
  readonly path: string;
  /** What is wrong with it: `could not be read: ENOENT: no such file or directory`, or no PEM certificate. */
  readonly problem: string;
}

type ReadOrThrow = (path: string) => string;

const readText: ReadOrThrow = (path) => readFileSync(path, "utf8");

/**
 * `SSL_CERT_FILE` and `NODE_EXTRA_CA_CERTS` naming a file that cannot be read, or one that holds no PEM
 * certificate: its CAs are left out of the trust list without a word (systemCas.ts), and an unusable
 * `SSL_CERT_FILE` leaves the distribution's bundle out too (it stands in its place, as for OpenSSL).
 */
export function caFileProblems(
  env: Readonly<Record<string, string | undefined>> = process.env,
  read: ReadOrThrow = readText,
): CaFileProblem[] {
  const problems: CaFileProblem[] = [];
  for (const variable of CA_FILE_VARIABLES) {
    const path = env[variable];
    if (path === undefined || path === "") continue;
    let text: string;
    try {
      text = read(path);
    } catch (err) {
      problems.push({ variable, path, problem: `could not be read: ${readError(err)}` });
      continue;
    }
    if (!text.includes("-----BEGIN CERTIFICATE-----"))
      problems.push({ variable, path, problem: "holds no PEM certificate (-----BEGIN CERTIFICATE-----)" });
  }
  return problems;
}

/**
 * Node's read error without the system call and the path it repeats (`ENOENT: no such file or directory,
 * open '/x.pem'`, `EISDIR: illegal operation on a directory, read`).
 */
function readError(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.replace(/, [a-z]+(?: '.*')?$/, "");
}

/** One problem as a message names it: `SSL_CERT_FILE (/etc/corp.pem) could not be read: ...`. */
export const caFileProblemText = (p: CaFileProblem): string => `${p.variable} (${p.path}) ${p.problem}`;

/** The WARN line for a problem, at the gateway's start and in `svc config check`. */
export function caFileWarning(p: CaFileProblem): string {
  const left =
    p.variable === "SSL_CERT_FILE"
      ? "TLS connections (model endpoints, MCP servers, delivery targets, Redis) trust neither its CAs nor the distribution's bundle it stands in for, only Node.js's own list and NODE_EXTRA_CA_CERTS"
      : "TLS connections (model endpoints, MCP servers, delivery targets, Redis) do not trust its CAs";
  return `${caFileProblemText(p)} — ${left}: point ${p.variable} at a readable PEM file, or unset it`;
}
