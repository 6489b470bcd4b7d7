import { refusedHint, unknownHostHint, urlPort } from "../outbound/unreachable.js";

/**
 * fetch's words for a connection refused (`connect ECONNREFUSED 127.0.0.1:8080`) or a host DNS does not know
 * (`getaddrinfo ENOTFOUND host`), with the port and the host they name.
 */
const REFUSED = /\bconnect ECONNREFUSED \S*:(\d+)\b/;
const UNKNOWN_HOST = /\bgetaddrinfo ENOTFOUND (\S+)/;

/**
 * What to check when a remote server's url could not be connected to at all, as a suffix for the connect
 * error: fetch says only `connect ECONNREFUSED 127.0.0.1:8080` (the server not started, the wrong port) or
 * `getaddrinfo ENOTFOUND host` (a typo in the host). Empty for any other failure, for a proxy that could
 * not be reached, whose own message names it, and for a port or host other than the url's (a redirect the
 * request followed, an OAuth server), which the url's key would not fix.
 */
export function unreachableUrlHint(server: string, text: string, url: string): string {
  if (/\bproxy\b/i.test(text)) return "";
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "";
  }
  const key = `mcp_servers.${server}.url`;
  if (REFUSED.exec(text)?.[1] === urlPort(parsed))
    return refusedHint(parsed, `start the server, or check ${key}`);
  if (UNKNOWN_HOST.exec(text)?.[1]?.toLowerCase() === parsed.hostname) return unknownHostHint(parsed, key);
  return "";
}
