import { isIPv6 } from "node:net";

/**
 * A bind address as users write it, in the form the HTTP servers take: `[::1]` (URL style) is `::1`, an
 * IPv6 address takes its short form (`0:0:0:0:0:0:0:1` is `::1`) and a name is compared without case
 * (`LOCALHOST` is `localhost`), so the loopback check sees each spelling. A value holding a scheme or a
 * port would fail at listen time with a misleading "address in use", so it is refused here.
 */
export function bindHost(
  text: string,
  portIn = "platforms.webhook.port (or WEBHOOK_PORT)",
): { host: string } | { problem: string } {
  const value = text.trim();
  const scheme = /^[a-z][a-z0-9+.-]*:\/\/([^/]*)/i.exec(value);
  if (scheme !== null)
    return { problem: `"${value}" is a URL — write the address only (e.g. ${hostOnly(scheme[1] ?? "")})` };
  const withPort = /^(\[[^\]]*\]|[^:[\]]+):(\d*)$/.exec(value);
  if (withPort !== null) {
    const host = hostOnly(withPort[1] ?? "");
    return {
      problem: `"${value}" includes a port — write ${host} and put the port in ${portIn}`,
    };
  }
  const bracketed = /^\[([^\]]+)\]$/.exec(value);
  const host = (bracketed?.[1] ?? value).toLowerCase();
  // One spelling per IPv6 address (0:0:0:0:0:0:0:1 is ::1), so the loopback check sees it.
  return {
    host: isIPv6(host) && !host.includes("%") ? new URL(`http://[${host}]`).hostname.slice(1, -1) : host,
  };
}

function hostOnly(authority: string): string {
  const host = authority.replace(/:\d*$/, "").replace(/^\[(.*)\]$/, "$1");
  return host === "" ? "127.0.0.1" : host;
}
