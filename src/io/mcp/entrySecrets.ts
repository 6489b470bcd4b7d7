import type { McpServerEntry } from "../../config/sections/mcp.js";

/** An `env` name that holds a credential (API_KEY, GITHUB_TOKEN, DB_PASSWORD, AUTH, ...). */
const CREDENTIAL_NAME = /key|token|secret|pass|auth|cred|session|cookie/i;

/**
 * The credentials a rendered MCP entry carries: header values (the token after `Bearer `/`Basic `),
 * credential-named `env` values and url query values (`?api_key=`), the url's password, the OAuth client secret and the
 * client certificate's key password. A server that echoes one in an error body, or a stdio process that
 * prints one on stderr, must not put it into lastError, the log or `svc mcp test` (spec 5 rule 6 and
 * the brief: no secret in any log line).
 */
export function entrySecrets(entry: McpServerEntry): string[] {
  const secrets: string[] = [];
  for (const value of Object.values(entry.headers ?? {})) {
    // `Bearer <token>`: the token (the scheme word stays readable, as in the log's own redaction).
    const credential = /^\s*(?:Bearer|Basic|Token)\s+(\S+)/i.exec(value)?.[1];
    secrets.push(credential ?? value);
  }
  for (const [name, value] of Object.entries(entry.env ?? {})) {
    if (CREDENTIAL_NAME.test(name)) secrets.push(value);
  }
  if (entry.url !== undefined) {
    try {
      const url = new URL(entry.url);
      if (url.password !== "") secrets.push(decodeURIComponent(url.password));
      for (const [name, value] of url.searchParams) if (CREDENTIAL_NAME.test(name)) secrets.push(value);
    } catch {
      // Not a URL: the connect fails on it with its own message.
    }
  }
  if (entry.oauth?.client_secret !== undefined) secrets.push(entry.oauth.client_secret);
  if (Array.isArray(entry.client_cert) && entry.client_cert[2] !== undefined)
    secrets.push(entry.client_cert[2]);
  return secrets;
}
