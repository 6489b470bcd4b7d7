import { bindHost, isLoopbackHost } from "../../config/host.js";

/** Headers a browser's request, or one a proxy passed on from another machine, carries; a local scraper's none. */
const FROM_ELSEWHERE = ["origin", "sec-fetch-site", "forwarded", "x-forwarded-for", "x-real-ip"] as const;

/**
 * The host of a Host header's value, without its port, an IPv6 literal's brackets and a name's trailing dot; an IPv6 address in
 * the one spelling bind addresses get (`[0:0:0:0:0:0:0:1]` and `[::1]` are one address, as are capitals).
 */
function hostName(authority: string): string {
  const bracketed = /^\[([^\]]*)\]/.exec(authority);
  if (bracketed !== null) {
    const address = bindHost(bracketed[1] as string);
    return "host" in address ? address.host : "";
  }
  const colon = authority.lastIndexOf(":");
  const name = (colon < 0 ? authority : authority.slice(0, colon)).toLowerCase();
  // A name written absolute (`localhost.`) is the same name: one trailing dot is dropped.
  return name.endsWith(".") ? name.slice(0, -1) : name;
}

/**
 * Whether a request comes from a program on this machine that asked for a loopback address by its own
 * name — a Prometheus here, or one through an SSH tunnel — rather than from a web page whose DNS name
 * was rebound to 127.0.0.1 (its `Host` names that page's site), a browser (`Origin`, `Sec-Fetch-Site`),
 * or a reverse proxy passing on a request from elsewhere (`Forwarded`, `X-Forwarded-For`, `X-Real-IP`).
 * Headers are the request's, names lower-cased; `targetHost` is the host a request target in absolute
 * form names, which stands for the request's host in place of `Host` (RFC 9112 §3.2.2).
 */
export function fromLocalScraper(
  headers: Readonly<Record<string, string | undefined>>,
  targetHost?: string,
): boolean {
  for (const name of FROM_ELSEWHERE) if (headers[name] !== undefined) return false;
  const host = targetHost ?? headers.host;
  return host === undefined || host === "" || isLoopbackHost(hostName(host));
}
