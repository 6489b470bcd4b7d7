/** `host:port` as an address is written: an IPv6 host in brackets (`[::1]:8644`, not `::1:8644`). */
export function listenAddress(host: string, port: number): string {
  return `${host.includes(":") ? `[${host}]` : host}:${port}`;
}
