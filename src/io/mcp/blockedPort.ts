import { BLOCKED_PORT } from "../outbound/blockedPort.js";

/** What fetch says when it refused the url's port before connecting (undici's cause: `bad port`). */
const BAD_PORT = /\bfetch failed: bad port\b/;

/**
 * What to change when a remote server's url is on a port fetch refuses to call (the Fetch standard's
 * blocked ports: 6000, 6665-6669, 10080, ...), as a suffix for the connect error: no reconnect can
 * change it, and `fetch failed: bad port` alone does not say that the port is the problem. Empty for any
 * other failure.
 */
export function blockedPortHint(server: string, text: string): string {
  if (!BAD_PORT.test(text)) return "";
  return ` — the port of mcp_servers.${server}.url is ${BLOCKED_PORT}, so svc never connects to it: serve the server on another port, or put a proxy in front`;
}
