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
