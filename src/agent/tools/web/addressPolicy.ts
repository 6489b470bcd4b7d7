import { isIPv4, isIPv6 } from "node:net";

/** IPv4 ranges that do not lead to the public internet (RFC 6890 special-purpose registry). */
const IPV4_BLOCKED: readonly (readonly [string, number])[] = [
  ["0.0.0.0", 8], // "this network"
  ["10.0.0.0", 8], // private
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local (cloud metadata at 169.254.169.254)
  ["172.16.0.0", 12], // private
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.0.2.0", 24], // documentation
  ["192.88.99.0", 24], // 6to4 relay anycast
  ["192.168.0.0", 16], // private
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // documentation
  ["203.0.113.0", 24], // documentation
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, and 255.255.255.255 broadcast
];

function ipv4Number(address: string): number {
  return address.split(".").reduce((n, part) => n * 256 + Number(part), 0);
}

function inIpv4Range(value: number, [base, bits]: readonly [string, number]): boolean {
  const size = 2 ** (32 - bits);
  const start = ipv4Number(base);
  return value >= start && value < start + size;
}

function ipv4Public(value: number): boolean {
  return !IPV4_BLOCKED.some((range) => inIpv4Range(value, range));
}

/** The eight 16-bit groups of an IPv6 address (zone id dropped, an embedded dotted quad converted). */
export function ipv6Groups(address: string): number[] {
  let text = address.split("%")[0] ?? "";
  const lastColon = text.lastIndexOf(":");
  const tail = text.slice(lastColon + 1);
  if (tail.includes(".")) {
    const v4 = ipv4Number(tail);
    text = `${text.slice(0, lastColon + 1)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const [head = "", rest] = text.split("::");
  const left = head === "" ? [] : head.split(":");
  const right = rest === undefined || rest === "" ? [] : rest.split(":");
  const missing = rest === undefined ? 0 : 8 - left.length - right.length;
  return [...left, ...Array<string>(missing).fill("0"), ...right].map((group) => Number.parseInt(group, 16));
}

function embeddedIpv4(high: number, low: number): number {
  return high * 65536 + low;
}

function ipv6Public(groups: readonly number[]): boolean {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = groups;
  const zeroTo4 = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (zeroTo4 && g5 === 0xffff) return ipv4Public(embeddedIpv4(g6, g7)); // ::ffff:a.b.c.d (IPv4-mapped)
  if (zeroTo4 && g5 === 0) return g6 !== 0 && ipv4Public(embeddedIpv4(g6, g7)); // ::, ::1, ::a.b.c.d
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0xffff && g5 === 0) {
    return ipv4Public(embeddedIpv4(g6, g7)); // ::ffff:0:a.b.c.d (IPv4-translated)
  }
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) {
    return ipv4Public(embeddedIpv4(g6, g7)); // 64:ff9b::/96 NAT64
  }
  if (g0 === 0x2002) return ipv4Public(embeddedIpv4(g1, g2)); // 6to4
  // Only 2000::/3 is global unicast: the rest is unique local (fc00::/7), link-local, multicast, the
  // local-use NAT64 prefix 64:ff9b:1::/48, discard-only 100::/64, SRv6 5f00::/16 or still reserved.
  if ((g0 & 0xe000) !== 0x2000) return false;
  if (g0 === 0x2001 && g1 === 0x0db8) return false; // documentation
  if (g0 === 0x3fff && g1 < 0x1000) return false; // 3fff::/20 documentation
  // 2001::/23 IETF protocol assignments: Teredo (its IPv4 side is obfuscated), benchmarking, ORCHID.
  if (g0 === 0x2001 && g1 < 0x0200) return false;
  return true;
}

/**
 * True when `address` (an IP literal) is a public unicast address: not private, loopback, link-local,
 * multicast, reserved or documentation space, also when an IPv4 address hides inside IPv6 (mapped,
 * compatible, NAT64, 6to4). Anything unparsable counts as not public.
 */
export function isPublicAddress(address: string): boolean {
  if (isIPv4(address)) return ipv4Public(ipv4Number(address));
  if (isIPv6(address)) {
    const groups = ipv6Groups(address);
    return groups.length === 8 && groups.every((g) => Number.isInteger(g)) && ipv6Public(groups);
  }
  return false;
}
