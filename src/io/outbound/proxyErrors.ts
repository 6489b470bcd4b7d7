/** The errors of a proxy that refused a request or could not be reached, said as the proxy's. */
import type { ProxyChoice } from "./proxyChoice.js";

/** A proxy that refused a request or could not be reached; its message names it, never its credentials. */
export class ProxyRefusedError extends Error {
  override readonly name = "ProxyRefusedError";
  constructor(
    message: string,
    /** What the proxy answered (407, a CONNECT's 403); undefined when it could not be reached. */
    readonly status?: number,
  ) {
    super(message);
  }
}

/** Connection failures that, through a proxy, are the proxy's: svc connects to nothing else. */
const UNREACHABLE = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ETIMEDOUT",
  "UND_ERR_CONNECT_TIMEOUT",
]);

const REASONS: Readonly<Record<number, string>> = {
  403: "Forbidden",
  407: "Proxy Authentication Required",
  502: "Bad Gateway",
  503: "Service Unavailable",
};

/** The error of a proxy that answered `status` to a request for `origin` (a CONNECT, a forwarded request). */
export function refusedStatus(proxy: ProxyChoice, status: number, origin: string): ProxyRefusedError {
  const named = `the proxy ${proxy.shown} (set by ${proxy.variable})`;
  const answer = `HTTP ${status}${REASONS[status] === undefined ? "" : ` ${REASONS[status]}`}`;
  if (status === 407)
    return new ProxyRefusedError(
      `${named} refused the request: ${answer} — ${proxy.url.username === "" ? `give its user and password in ${proxy.variable} (http://user:password@host:port)` : `check the user and password in ${proxy.variable}`}`,
      status,
    );
  return new ProxyRefusedError(
    `${named} refused to connect to ${new URL(origin).host}: ${answer} — the proxy may not allow this host; add the host to NO_PROXY if it is reachable without the proxy`,
    status,
  );
}

/** An error of a request sent through `proxy`, said as the proxy's when it was the proxy that failed. */
export function proxyError(proxy: ProxyChoice, origin: string, err: Error): Error {
  const tunnel = /^Proxy response \((\d+)\) !== 200/.exec(err.message);
  if (tunnel !== null) return refusedStatus(proxy, Number(tunnel[1]), origin);
  if (err.message === "Proxy Authentication Required (407)") return refusedStatus(proxy, 407, origin);
  const code = (err as NodeJS.ErrnoException).code;
  if (code !== undefined && UNREACHABLE.has(code))
    return new ProxyRefusedError(
      `the proxy ${proxy.shown} (set by ${proxy.variable}) could not be reached: ${code} — check ${proxy.variable}`,
    );
  return err;
}
