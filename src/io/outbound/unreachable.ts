/**
 * The words for a url nothing could be connected to, shared by the model endpoint and remote MCP servers:
 * fetch says only `connect ECONNREFUSED 127.0.0.1:8080` (nothing started there, the wrong port) or
 * `getaddrinfo ENOTFOUND host` (a typo in the host).
 */

/** The port a connection to `url` goes to: its own, else its scheme's. */
export function urlPort(url: URL): string {
  return url.port || (url.protocol === "https:" ? "443" : "80");
}

/** ` — nothing listens on port P of H: <remedy>` */
export function refusedHint(url: URL, remedy: string): string {
  return ` — nothing listens on port ${urlPort(url)} of ${url.hostname}: ${remedy}`;
}

/** ` — the host name H is not known (DNS): check the host in <key>` */
export function unknownHostHint(url: URL, key: string): string {
  return ` — the host name ${url.hostname} is not known (DNS): check the host in ${key}`;
}

/**
 * fetch's words for a connection refused (`connect ECONNREFUSED 127.0.0.1:8080`) or a host DNS does not know
 * (`getaddrinfo ENOTFOUND host`), with the port and the host they name: a host name holds no parenthesis,
 * comma or semicolon, so one quoted inside svc's own words (`server/discover failed (fetch failed: getaddrinfo
 * ENOTFOUND host) and …`) ends before them.
 */
export const REFUSED = /\bconnect ECONNREFUSED \S*:(\d+)\b/;
export const UNKNOWN_HOST = /\bgetaddrinfo ENOTFOUND ([^\s(),;]+)/;

/**
 * What to check when `url` (written under `key`) could not be connected to at all: ` — nothing listens on
 * port P of H: <refusedRemedy>` or ` — the host name H is not known (DNS): check the host in <key>`, read
 * from the connect error's `text`. Empty for any other failure, for a proxy (whose own message names it),
 * and for a port or host other than the url's (a redirect, a token endpoint), which the key would not fix.
 */
export function unreachableHint(text: string, url: string, key: string, refusedRemedy: string): string {
  if (/\bproxy\b/i.test(text)) return "";
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "";
  }
  if (REFUSED.exec(text)?.[1] === urlPort(parsed)) return refusedHint(parsed, refusedRemedy);
  if (UNKNOWN_HOST.exec(text)?.[1]?.toLowerCase() === parsed.hostname) return unknownHostHint(parsed, key);
  return "";
}
