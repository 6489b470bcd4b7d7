import { isIPv6 } from "node:net";
import { describe, type Quoting } from "./describe.js";
import { textWithoutUrlCredentials } from "./urlCredentials.js";

/**
 * A bind address as users write it, in the form the HTTP servers take: `[::1]` (URL style) is `::1`, an
 * IPv6 address takes its short form (`0:0:0:0:0:0:0:1` is `::1`) and a name is compared without case
 * (`LOCALHOST` is `localhost`), so the loopback check sees each spelling. A value holding a scheme or a
 * port would fail at listen time with a misleading "address in use", so it is refused here: `problem` says
 * why, and `quoting` says it again of how a message quotes the value (the file's text, for one a `${VAR}`
 * gave, with no part of the value written back).
 */
export function bindHost(
  text: string,
  portIn = "platforms.webhook.port (or WEBHOOK_PORT)",
): { host: string } | { problem: string; quoting: Quoting } {
  const value = text.trim();
  // `https://user:<password>@host`: quoted without the password, and the address is the host after the @.
  const shown = textWithoutUrlCredentials(value);
  const quoting = hostProblem(value, shown, portIn);
  if (quoting !== undefined) return { problem: quoting(describe(shown), false), quoting };
  const bracketed = /^\[([^\]]+)\]$/.exec(value);
  const host = (bracketed?.[1] ?? value).toLowerCase();
  // One spelling per IPv6 address (0:0:0:0:0:0:0:1 is ::1), so the loopback check sees it. A host without a
  // colon is no IPv6 address: Node's isIPv6 compiles and runs its long pattern (~4 ms at its first call, in
  // every start that reads a host such as 127.0.0.1).
  return { host: host.includes(":") && !host.includes("%") ? shortIpv6(host) : host };
}

/** Why `value` (trimmed; `shown` without a URL's credentials) is no address to listen on, or undefined. */
function hostProblem(value: string, shown: string, portIn: string): Quoting | undefined {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\/([^/]*)/i.exec(shown);
  if (scheme !== null) {
    const address = hostOnly((scheme[1] ?? "").replace(/^.*@/, ""));
    return (quoted, given) =>
      `${quoted} is a URL — write the address only${given ? "" : ` (e.g. ${address})`}`;
  }
  const withPort = /^(\[[^\]]*\]|[^:[\]]+):(\d*)$/.exec(value);
  if (withPort !== null) {
    const host = hostOnly(withPort[1] ?? "");
    return (quoted, given) =>
      `${quoted} includes a port — write ${given ? "the address alone" : host} and put the port in ${portIn}`;
  }
  // `[::1` or `::1]`: read as a name, it failed at listen time with "is another gateway running?".
  if (value.startsWith("[") !== value.endsWith("]")) {
    const bare = shown.replace(/^\[|\]$/g, "");
    const which = shown.startsWith("[") ? "a [ without its ]" : "a ] without its [";
    return (quoted, given) =>
      `${quoted} has ${which} — write the address alone${given ? ", or in brackets" : ` (${bare}), or in brackets ([${bare}])`}`;
  }
  // Other servers' spellings of "every interface" and of a network: no address to listen on.
  if (value === "*")
    return (quoted) =>
      `${quoted} is not an address — write 0.0.0.0 to listen on every interface (:: for IPv6 too)`;
  if (/^[^/\s]+\/\d+$/.test(value))
    return (quoted) =>
      `${quoted} is a network, not an address — write one address to listen on, such as 127.0.0.1, or 0.0.0.0 for every interface`;
  const bracketed = /^\[([^\]]+)\]$/.exec(value);
  const host = (bracketed?.[1] ?? value).toLowerCase();
  // Read as a name, 999.1.1.1 or 1::2::3 failed each start as a host name that does not resolve.
  const quad = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(host);
  if (quad?.slice(1).some((octet) => Number(octet) > 255) === true)
    return (quoted) =>
      `${quoted} is not an IPv4 address: each of its four numbers must be 0 to 255 — write an address such as 127.0.0.1, or 0.0.0.0 for every interface`;
  if (host.includes(":") && !isIPv6(host))
    return (quoted) =>
      `${quoted} is not a valid IPv6 address — write one such as ::1 (or [::1]), or :: for every interface`;
  return undefined;
}

/**
 * An IPv6 address in the short form of RFC 5952, as URLs write it (`0:0:0:0:0:0:0:1` is `::1`), except that an
 * IPv4-mapped one keeps its dotted quad (section 5): `::ffff:127.0.0.1`, where URLs write `::ffff:7f00:1`.
 */
function shortIpv6(address: string): string {
  const short = new URL(`http://[${address}]`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(short);
  if (mapped === null) return short;
  const [high, low] = [Number.parseInt(mapped[1] as string, 16), Number.parseInt(mapped[2] as string, 16)];
  return `::ffff:${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}

/**
 * Bind addresses that listen on every network interface: `0.0.0.0`, `::` (IPv4 too, on a dual-stack host) and
 * `::ffff:0.0.0.0` (every IPv4 interface, through an IPv6 socket); `*` and the empty host as other servers write them.
 */
const ALL_INTERFACES = new Set(["0.0.0.0", "::", "[::]", "::ffff:0.0.0.0", "*", ""]);

/** Whether a bind address (as `bindHost` returns it) listens on every network interface. */
export function bindsEveryInterface(host: string): boolean {
  return ALL_INTERFACES.has(host);
}

/** 127.0.0.0/8 written as a dotted quad: every such address is the machine's own loopback interface. */
const IPV4_LOOPBACK = /^127(?:\.(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}$/;
/**
 * The same addresses IPv4-mapped, as `bindHost` gives them (`::ffff:127.0.0.1`), or as URLs write them
 * (`::ffff:7f00:1`, which a gateway.json written before kept).
 */
const MAPPED_LOOPBACK =
  /^::ffff:(?:7f[0-9a-f]{2}:[0-9a-f]{1,4}|127(?:\.(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3})$/;

/**
 * Whether a bind address (as `bindHost` returns it) listens on loopback only: `localhost`, `::1` and the
 * whole 127.0.0.0/8 block (`127.0.0.2` is loopback as much as `127.0.0.1`), also IPv4-mapped.
 */
export function isLoopbackHost(host: string): boolean {
  return host === "localhost" || host === "::1" || IPV4_LOOPBACK.test(host) || MAPPED_LOOPBACK.test(host);
}

function hostOnly(authority: string): string {
  const host = authority.replace(/:\d*$/, "").replace(/^\[(.*)\]$/, "$1");
  return host === "" ? "127.0.0.1" : host;
}
