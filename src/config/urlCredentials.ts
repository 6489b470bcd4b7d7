/**
 * A URL as a message may quote it: the password of `user:password@` and credential-named query values
 * (`?api_key=`, `&token=`) replaced by `[redacted]`. Also a URL written without its scheme
 * (`me:pw@localhost:8080/mcp`, which a URL parser reads as the scheme "me:"), whose password would
 * otherwise be quoted back.
 */
export function withoutUrlCredentials(url: string): string {
  return url
    .replace(/^((?:[a-z][a-z0-9+.-]*:\/\/)?[^\s:@/]*:)[^\s@/]+@/i, "$1[redacted]@")
    .replace(
      /([?&][^=&#]*(?:key|token|secret|pass|auth|cred|session|cookie)[^=&#]*=)[^&#]*/gi,
      "$1[redacted]",
    );
}
