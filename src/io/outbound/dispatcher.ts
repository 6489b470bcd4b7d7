/**
 * Sending through the proxy: the undici dispatcher and the fetch every outbound request uses, and how to
 * talk to the proxy itself (its TLS options, its Proxy-Authorization).
 */
import type { SecureContext } from "node:tls";
import type { Agent, buildConnector, Dispatcher } from "undici";
import { importExternal } from "../importExternal.js";
import { secureContextFor, systemCaCertificates } from "../mcp/systemCas.js";
import { type ProxyChoice, proxyConfigured, proxyFor } from "./proxyChoice.js";
import { proxyError, refusedStatus } from "./proxyErrors.js";

/** The `Proxy-Authorization` header of a proxy URL with credentials (Basic), as undici sends it. */
export function proxyAuthorization(proxy: ProxyChoice): string | undefined {
  const { username, password } = proxy.url;
  if (username === "" || password === "") return undefined;
  const pair = `${decodeURIComponent(username)}:${decodeURIComponent(password)}`;
  return `Basic ${Buffer.from(pair).toString("base64")}`;
}

type Handler = Dispatcher.DispatchHandler & {
  onError?: (err: Error) => void;
  onHeaders?: (status: number, headers: Buffer[], resume: () => void, statusText: string) => boolean;
};

/**
 * The handler's errors said as the proxy's (the handler is changed in place, as undici's own proxy
 * wrapper does). A 407 answered to a forwarded http request is an error too, not the origin's answer.
 */
function namingProxy(proxy: ProxyChoice, origin: string, handler: Handler): Handler {
  const { onError, onHeaders } = handler;
  if (typeof onError !== "function") return handler;
  handler.onError = function (this: unknown, err: Error) {
    onError.call(this, proxyError(proxy, origin, err));
  };
  if (typeof onHeaders === "function" && origin.startsWith("http:"))
    handler.onHeaders = function (this: unknown, status, headers, resume, statusText) {
      if (status !== 407) return onHeaders.call(this, status, headers, resume, statusText);
      onError.call(this, refusedStatus(proxy, 407, origin));
      return false;
    };
  return handler;
}

/**
 * The TLS options of the connection to an `https://` proxy: verified against the system's CAs (as model
 * endpoints are: a company proxy is often served under a company CA of the system trust store); none for
 * an `http://` proxy, or when there is no system bundle (Node's own CAs then).
 */
export function proxyTlsOptions(proxy: ProxyChoice): { secureContext?: SecureContext } {
  if (proxy.url.protocol !== "https:") return {};
  const ca = systemCaCertificates();
  return ca === undefined ? {} : { secureContext: secureContextFor({ ca }) };
}

type Undici = typeof import("undici");

/**
 * The one dispatcher factory every outbound request goes through: an undici Agent with `options` for
 * direct requests, and per proxy a ProxyAgent with the same options, `options.connect` applying to the
 * origin through the tunnel (its CA list, `rejectUnauthorized`, client certificate). https URLs go
 * through a CONNECT tunnel; http URLs are forwarded to an http:// proxy (proxies refuse CONNECT to port
 * 80). The proxy is picked per request (`proxyFor`), so `NO_PROXY` and loopback hosts go direct.
 */
export function outboundDispatcher(
  undici: Undici,
  options: Agent.Options = {},
  /** Wraps the connector of direct connections (`options.connect` built), to watch them; not a proxy's tunnels. */
  watchDirect?: (connector: buildConnector.connector) => buildConnector.connector,
): Dispatcher {
  const { connect, ...poolOptions } = options;
  const directOptions =
    watchDirect === undefined || typeof connect === "function"
      ? options
      : { ...options, connect: watchDirect(undici.buildConnector(connect ?? {})) };
  let direct: Dispatcher | undefined;
  const viaProxy = new Map<string, Dispatcher>();
  const through = (proxy: ProxyChoice): Dispatcher => {
    let agent = viaProxy.get(proxy.url.href);
    if (agent === undefined) {
      agent = new undici.ProxyAgent({
        ...poolOptions,
        uri: proxy.url.href,
        proxyTunnel: false,
        proxyTls: proxyTlsOptions(proxy),
        ...(connect === undefined || typeof connect === "function" ? {} : { requestTls: connect }),
        // The forwarding client to the proxy takes the pool's options too (its timeouts).
        factory: (origin, opts) => new undici.Pool(origin, { ...poolOptions, ...opts }),
      });
      viaProxy.set(proxy.url.href, agent);
    }
    return agent;
  };
  const all = () => [...(direct === undefined ? [] : [direct]), ...viaProxy.values()];
  class Outbound extends undici.Dispatcher {
    override dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
      const origin = String(opts.origin ?? "");
      const proxy = proxyFor(new URL(origin));
      if (proxy === undefined) {
        direct ??= new undici.Agent(directOptions);
        return direct.dispatch(opts, handler);
      }
      return through(proxy).dispatch(opts, namingProxy(proxy, origin, handler as Handler));
    }
    override close(): Promise<void>;
    override close(callback: () => void): void;
    override close(callback?: () => void): Promise<void> | void {
      const closed = Promise.all(all().map((agent) => agent.close())).then(() => undefined);
      if (callback === undefined) return closed;
      void closed.then(callback);
    }
    override destroy(): Promise<void>;
    override destroy(err: Error | null): Promise<void>;
    override destroy(callback: () => void): void;
    override destroy(err: Error | null, callback: () => void): void;
    override destroy(
      errOrCallback?: Error | null | (() => void),
      callback?: () => void,
    ): Promise<void> | void {
      const err = typeof errOrCallback === "function" ? null : (errOrCallback ?? null);
      const done = typeof errOrCallback === "function" ? errOrCallback : callback;
      const destroyed = Promise.all(all().map((agent) => agent.destroy(err))).then(() => undefined);
      if (done === undefined) return destroyed;
      void destroyed.then(done);
    }
  }
  return new Outbound();
}

let shared: Promise<Dispatcher> | undefined;

/**
 * The global fetch for a place with no Agent of its own (delivery targets, web search, OAuth, MCP
 * without TLS settings): unchanged when no proxy variable is set, else through `outboundDispatcher`.
 * The global fetch is looked up at each call.
 */
export const outboundFetch = (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
  if (!proxyConfigured()) return globalThis.fetch(input, init);
  shared ??= importExternal<Undici>("undici").then((undici) => outboundDispatcher(undici));
  const dispatcher = await shared;
  // Node's fetch takes a dispatcher of the undici package (its types are those of the undici it bundles).
  return globalThis.fetch(input, { ...init, dispatcher } as unknown as RequestInit);
}) as typeof fetch;
