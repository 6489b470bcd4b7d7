import { unreachableHint } from "../outbound/unreachable.js";

/**
 * What to check when a remote server's url could not be connected to at all, as a suffix for the connect
 * error: fetch says only `connect ECONNREFUSED 127.0.0.1:8080` (the server not started, the wrong port) or
 * `getaddrinfo ENOTFOUND host` (a typo in the host). Empty for any other failure, for a proxy that could
 * not be reached, whose own message names it, and for a port or host other than the url's (a redirect the
 * request followed, an OAuth server), which the url's key would not fix.
 */
export function unreachableUrlHint(server: string, text: string, url: string): string {
  const key = `mcp_servers.${server}.url`;
  return unreachableHint(text, url, key, `start the server, or check ${key}`);
}
