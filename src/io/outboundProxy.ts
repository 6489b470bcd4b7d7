import { BlockList, isIP } from "node:net";
import type { SecureContext } from "node:tls";
import type { Agent, Dispatcher } from "undici";
import { secureContextFor, systemCaCertificates } from "./mcp/systemCas.js";

type Env = Readonly<Record<string, string | undefined>>;

/** The proxy a request goes through, and the variable that named it (for messages). */
export interface ProxyChoice {
  /** The proxy's URL, credentials included: for the connection only, never for a message. */
  readonly url: URL;
  /** The proxy's URL without credentials (`http://proxy.corp:3128`). */
  readonly shown: string;
  /** The variable as it was set (`HTTPS_PROXY`, `https_proxy`, `ALL_PROXY`, ...). */
  readonly variable: string;
}

/** A proxy variable svc cannot use (not a URL, a scheme other than http and https). */
export class ProxySettingError extends Error {
  override readonly name = "ProxySettingError";
}

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

/**
 * The value of a variable and its name as set: lower case first, as curl reads them (`https_proxy` wins
 * over `HTTPS_PROXY` when both are set); an empty value counts as unset.
 */
function variable(env: Env, name: string): { name: string; value: string } | undefined {
  for (const spelled of [name.toLowerCase(), name.toUpperCase()]) {
    const value = env[spelled]?.trim();
    if (value !== undefined && value !== "") return { name: spelled, value };
  }
  return undefined;
}

function proxyUrl(name: string, value: string): ProxyChoice {
  // A proxy written without a scheme (`proxy.corp:3128`) is an http:// one, as curl takes it.
  const written = /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`;
  let url: URL;
  try {
    url = new URL(written);
  } catch {
    throw new ProxySettingError(`${name} is not a proxy URL — write it as http://host:port`);
  }
  const shown = `${url.protocol}//${url.host}`;
  try {
    decodeURIComponent(url.username);
    decodeURIComponent(url.password);
  } catch {
    // Sent as it is, the request would fail as "URI malformed"; the value itself is never shown.
    throw new ProxySettingError(
      `${name}: the user or password of ${shown} holds a % that starts no %XX — write them percent-encoded (%25 for %, %40 for @)`,
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new ProxySettingError(
      `${name}: svc reaches a proxy over http:// or https:// only, not ${url.protocol.slice(0, -1)}:// (${shown})`,
    );
  return { url, shown, variable: name };
}

interface NoProxyEntry {
  readonly host: string;
  readonly port: number | undefined;
}

interface ProxySettings {
  readonly https: ProxyChoice | undefined;
  readonly http: ProxyChoice | undefined;
  readonly all: ProxyChoice | undefined;
  readonly bypassAll: boolean;
  readonly hosts: readonly NoProxyEntry[];
  readonly subnets: BlockList;
}

let cached: { key: string; settings: ProxySettings } | undefined;

const NAMES = ["https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"];
const NO_PROXY_NAMES = ["no_proxy", "NO_PROXY"];

/** The proxy variables read once per distinct value (they are looked at for every request). */
function settings(env: Env): ProxySettings {
  const key = [...NAMES, ...NO_PROXY_NAMES].map((name) => env[name] ?? "").join("\n");
  if (cached?.key === key) return cached.settings;
  const choice = (name: string) => {
    const set = variable(env, name);
    return set === undefined ? undefined : proxyUrl(set.name, set.value);
  };
  const subnets = new BlockList();
  const hosts: NoProxyEntry[] = [];
  let bypassAll = false;
  for (const raw of (variable(env, "no_proxy")?.value ?? "").split(/[\s,]+/)) {
    const entry = raw.trim().toLowerCase();
    if (entry === "") continue;
    if (entry === "*") {
      bypassAll = true;
      continue;
    }
    const cidr = /^\[?([0-9a-f.:]+)\]?\/(\d{1,3})$/.exec(entry);
    const family = cidr === null ? 0 : isIP(cidr[1] as string);
    if (cidr !== null && family !== 0) {
      try {
        subnets.addSubnet(cidr[1] as string, Number(cidr[2]), family === 4 ? "ipv4" : "ipv6");
      } catch {
        // A prefix longer than the address: not an entry svc can match.
      }
      continue;
    }
    // host:port, [v6]:port, or a bare host (a bare IPv6 address holds colons of its own).
    const withPort = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(entry);
    const host = (withPort === null ? entry : (withPort[1] as string)).replace(/^\[|\]$/g, "");
    hosts.push({
      host: host.replace(/^\*?\./, ""),
      port: withPort === null ? undefined : Number(withPort[2]),
    });
  }
  const parsed: ProxySettings = {
    https: choice("https_proxy"),
    http: choice("http_proxy"),
    all: choice("all_proxy"),
    bypassAll,
    hosts,
    subnets,
  };
  cached = { key, settings: parsed };
  return parsed;
}

/** Whether a host is this machine's loopback, which no proxy can reach. */
function isLoopback(host: string): boolean {
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  const family = isIP(host);
  if (family === 4) return host.startsWith("127.");
  if (family === 6) return host === "::1" || /^::ffff:127\./.test(host) || /^(0+:){7}0*1$/.test(host);
  return false;
}

function bypassed(s: ProxySettings, host: string, port: number): boolean {
  if (s.bypassAll) return true;
  const family = isIP(host);
  if (family !== 0 && s.subnets.check(host, family === 4 ? "ipv4" : "ipv6")) return true;
  return s.hosts.some(
    (entry) =>
      (entry.port === undefined || entry.port === port) &&
      (host === entry.host || (family === 0 && host.endsWith(`.${entry.host}`))),
  );
}

/**
 * The proxy a request to `target` goes through, as curl picks it: `https_proxy` for https URLs,
 * `http_proxy` for http ones, `all_proxy` for both when those are unset (each in lower or upper case,
 * lower case first); none for a host `no_proxy` names (`*`, a host and its subdomains, `.domain`,
 * `host:port`, an IP address or a CIDR range) and never for this machine's loopback. Undefined: direct.
 */
export function proxyFor(target: URL, env: Env = process.env): ProxyChoice | undefined {
  const s = settings(env);
  const chosen = target.protocol === "https:" ? (s.https ?? s.all) : (s.http ?? s.all);
  if (chosen === undefined) return undefined;
  const host = target.hostname.toLowerCase().replace(/^\[|\]$/g, "");
  const port = Number(target.port) || (target.protocol === "https:" ? 443 : 80);
  if (isLoopback(host) || bypassed(s, host, port)) return undefined;
  return chosen;
}

/** Whether any proxy variable is set: without one, every request goes out directly, as before. */
export function proxyConfigured(env: Env = process.env): boolean {
  const s = settings(env);
  return s.https !== undefined || s.http !== undefined || s.all !== undefined;
}

/**
 * The INFO line saying that outbound requests use a proxy (none when no proxy variable is set), naming
 * each proxy without its credentials. A variable svc cannot use is said as a problem instead.
 */
export function proxyNotice(env: Env = process.env): { level: "info" | "error"; text: string } | undefined {
  let s: ProxySettings;
  try {
    s = settings(env);
  } catch (err) {
    return { level: "error", text: `outbound proxy: ${(err as Error).message}` };
  }
  const uses = [
    s.https === undefined ? undefined : `https URLs through ${s.https.shown} (${s.https.variable})`,
    s.http === undefined ? undefined : `http URLs through ${s.http.shown} (${s.http.variable})`,
    s.all === undefined
      ? undefined
      : `${(s.https ?? s.http) ? "other" : "all"} URLs through ${s.all.shown} (${s.all.variable})`,
  ].filter((use) => use !== undefined);
  if (uses.length === 0) return undefined;
  const none = variable(env, "no_proxy");
  return {
    level: "info",
    text: `outbound requests use a proxy: ${uses.join(", ")}; loopback hosts${none === undefined ? "" : ` and ${none.name}=${none.value}`} go direct`,
  };
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
export function outboundDispatcher(undici: Undici, options: Agent.Options = {}): Dispatcher {
  const { connect, ...poolOptions } = options;
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
        direct ??= new undici.Agent(options);
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
  shared ??= import("undici").then((undici) => outboundDispatcher(undici));
  const dispatcher = await shared;
  // Node's fetch takes a dispatcher of the undici package (its types are those of the undici it bundles).
  return globalThis.fetch(input, { ...init, dispatcher } as unknown as RequestInit);
}) as typeof fetch;
