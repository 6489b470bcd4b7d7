/**
 * The proxy an outbound request goes through, chosen from the environment as curl does (`https_proxy`,
 * `http_proxy`, `all_proxy`, `no_proxy`), and the line that tells the user about it.
 */
import { BlockList, isIP } from "node:net";

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
    // An address without a port is compared as one (2001:db8:0::1 is 2001:db8::1, ::ffff:10.1.2.3 is 10.1.2.3).
    const address = withPort === null ? isIP(host) : 0;
    if (address !== 0) {
      subnets.addAddress(host, address === 4 ? "ipv4" : "ipv6");
      continue;
    }
    hosts.push({
      // [2001:db8:0::1]:8080 as URLs write its host: 2001:db8::1.
      host:
        isIP(host) === 6 && !host.includes("%")
          ? new URL(`http://[${host}]`).hostname.slice(1, -1)
          : host.replace(/^\*?\./, ""),
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

/** 127.0.0.0/8 and ::1; BlockList matches an IPv4-mapped address (URLs write ::ffff:127.0.0.1 as ::ffff:7f00:1) too. */
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet("127.0.0.0", 8, "ipv4");
LOOPBACK.addAddress("::1", "ipv6");

/** Whether a host is this machine's loopback, which no proxy can reach. */
function isLoopback(host: string): boolean {
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  const family = isIP(host);
  return family !== 0 && LOOPBACK.check(host, family === 4 ? "ipv4" : "ipv6");
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
