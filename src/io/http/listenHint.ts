import { networkInterfaces } from "node:os";

const ANY_OR_LOOPBACK = new Set(["0.0.0.0", "::", "localhost", "127.0.0.1", "::1"]);

function isLocalAddress(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  if (ANY_OR_LOOPBACK.has(bare) || bare.startsWith("127.")) return true;
  return Object.values(networkInterfaces()).some((list) => list?.some((a) => a.address === bare));
}

/**
 * The interfaces that have `host`, a link-local IPv6 address (fe80::/10) written without its zone: such an
 * address belongs to one interface, and is bound only with it (`fe80::1%eth0`; without it, EINVAL).
 */
function linkLocalInterfaces(host: string): string[] {
  const bare = host.replace(/^\[|\]$/g, "");
  if (!/^fe[89ab][0-9a-f]?:/i.test(bare) || bare.includes("%")) return [];
  return Object.entries(networkInterfaces())
    .filter(([, list]) => list?.some((a) => a.family === "IPv6" && a.address === bare))
    .map(([name]) => name);
}

/** `host:port` as an address is written: an IPv6 host in brackets (`[::1]:8644`, not `::1:8644`). */
export function listenAddress(host: string, port: number): string {
  return `${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${port}`;
}

/**
 * What to do when the listener cannot bind: a busy port, a port this user may not take, or a host that is
 * not this machine's address. `inspectPort`: the port this gateway's own `--inspect` relay took before it,
 * which no other gateway holds. `code`: the system's reason, when known (`EACCES`, `EADDRINUSE`, ...).
 */
export function listenFailureHint(host: string, port?: number, inspectPort?: number, code?: string): string {
  if (port !== undefined && port !== 0 && port === inspectPort)
    return `the inspector (--inspect) already listens on port ${port} — choose another port for one of them: --inspect <port>, or platforms.webhook.port, WEBHOOK_PORT or --port`;
  if (code === "EACCES" || code === "EPERM")
    return port !== undefined && port > 0 && port < 1024
      ? `port ${port} is below 1024, where only root or a program given CAP_NET_BIND_SERVICE may listen (${code}) — choose a port from 1024 up (platforms.webhook.port, WEBHOOK_PORT or --port) and forward ${port} to it (a reverse proxy, a container's published port: -p ${port}:8644), or give node that capability (setcap cap_net_bind_service=+ep on the node binary)`
      : `this user may not listen there (${code}: a security policy such as SELinux refuses it) — choose another port (platforms.webhook.port, WEBHOOK_PORT or --port), or allow this one in that policy`;
  const zones = linkLocalInterfaces(host);
  if (zones.length > 0)
    return `${host} is a link-local address, which is bound with its interface — write ${zones.map((zone) => `${host}%${zone}`).join(" or ")} in platforms.webhook.host (or --host)`;
  return isLocalAddress(host)
    ? "is another gateway running? Stop it, or choose another port (platforms.webhook.port, WEBHOOK_PORT or --port)"
    : `${host} is not an address of this machine — set platforms.webhook.host (or --host) to one of its addresses, 0.0.0.0 or 127.0.0.1`;
}
