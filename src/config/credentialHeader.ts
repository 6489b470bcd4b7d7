/**
 * A header or `env` name that holds a credential (`Authorization`, `X-Api-Key`, `GITHUB_TOKEN`, `Cookie`):
 * what `svc mcp add` notes when written out, refuses when empty, and what a 401's hint names as sent.
 */
export const CREDENTIAL_NAME = /key|token|secret|pass|auth|cookie/i;

/** A header value that carries nothing to check: empty, or a scheme alone (fetch trims the space after it). */
export function holdsNoCredential(value: string): boolean {
  const trimmed = value.trim();
  return trimmed === "" || /^(?:bearer|basic|token)$/i.test(trimmed);
}
