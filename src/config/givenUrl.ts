import { describe, type WrittenAs } from "./describe.js";

const regexpEscaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * The texts the URL `url` may stand in an error as: as given, and as a URL writes it once parsed (fetch and
 * the SDKs name the request's URL so: its scheme and host in lower case, a default port left out, a non-ASCII
 * host in its `xn--` form), without the `/` the parse adds after a bare host. Longest first.
 */
function urlForms(url: string): string[] {
  if (url === "") return [];
  const forms = new Set([url]);
  if (URL.canParse(url)) {
    const href = new URL(url).href;
    forms.add(url.endsWith("/") ? href : href.replace(/\/$/, ""));
  }
  return [...forms].sort((a, b) => b.length - a.length);
}

/**
 * `text` with a URL a `${VAR}` gave (`url`, the value; `written`, config.yaml's text for it) named as
 * config.yaml writes it (`"${BASE}" (the value it gives is not shown)/chat/completions`) in whichever form the
 * error writes it (`urlForms`; any case), and its host, where the system's messages (`getaddrinfo ENOTFOUND
 * <host>`, `connect ECONNREFUSED <host>:<port>`) and the hints made from them name it (`systemsHost`), as
 * `<the host of "${BASE}" (…)>`: never what the variable gave. A host written as it is
 * (`http://localhost:${PORT}/mcp`) is no variable's value, and stays.
 */
export function withUrlAsWritten(text: string, url: string, written: WrittenAs): string {
  const quoted = describe(written);
  let shown = text;
  for (const form of urlForms(url))
    shown = shown.replace(new RegExp(regexpEscaped(form), "gi"), () => quoted);
  const hostWritten = typeof written.text === "string" ? writtenHost(written.text) : "";
  if (hostWritten !== "" && !hostWritten.includes("${")) return shown;
  const hosts = URL.canParse(url) ? [new URL(url).hostname, writtenHost(url)] : [];
  return withHostNamed(shown, hosts, `<the host of ${quoted}>`);
}

/** The host part of a URL's text as written (before `:port`, a path, a query), or "" when it has none. */
function writtenHost(url: string): string {
  return /^[A-Za-z][\w+.-]*:\/\/(?:[^\s/?#@]*@)?(\[[^\]]*\]|[^\s:/?#]*)/.exec(url)?.[1] ?? "";
}

/**
 * Where the system's messages, and svc's hints made from them, name a host: after an error code
 * (`getaddrinfo ENOTFOUND <host>`, `connect ECONNREFUSED <host>:<port>`, a DNS query's `queryA ETIMEOUT
 * <host>`, `ESERVFAIL`, `ENODATA`, `EREFUSED`), in `nothing listens on port <port> of <host>` and `the host
 * name <host> is not known`, after a TLS check's `Host: ` and `IP: ` (`Hostname/IP does not match
 * certificate's altnames: IP: <ip> is not in the cert's list`), in undici's `attempted address: <host>:<port>`
 * and each of its `attempted addresses: <a>, <b>`, in a stalled connect's `the TLS handshake with
 * <host>:<port>` and `the TCP connect to <host>:<port>`, in nodemailer's `DNS lookup for <host> timed out`
 * (a DNS server that does not answer), and as a URL's host.
 */
const HOST_PLACES =
  "(?<=\\bE(?:NOTFOUND|CONNREFUSED|CONNRESET|TIMEDOUT|TIMEOUT|SERVFAIL|NODATA|REFUSED|HOSTUNREACH|HOSTDOWN|NETUNREACH|ADDRNOTAVAIL|AI_[A-Z]+) |\\bport \\d+ of |\\bhost name |\\bHost: |\\bIP: |\\battempted address(?:es)?: (?:[^\\s,]+, )*|\\bhandshake with |\\bconnect to |\\bDNS lookup for |://(?:[^\\s/?#@]*@)?)";

/**
 * `text` with each of the `hosts` (with or without an IPv6 address's brackets) said as `shown` where the
 * system's messages name a host (`HOST_PLACES`), as it is written there (a URL's parse writes it in lower
 * case): the same word elsewhere (a platform's `signal:` before its message, `MCP server`) is svc's own.
 */
function withHostNamed(text: string, hosts: readonly string[], shown: string): string {
  let named = text;
  for (const name of [...hostNames(hosts)].sort((a, b) => b.length - a.length))
    if (name !== "")
      named = named.replace(
        new RegExp(`${HOST_PLACES}${regexpEscaped(name)}(?![\\w-]|\\.[\\w-])`, "g"),
        () => shown,
      );
  return named;
}

/** The names `hosts` stand in the system's words as: each with and without an IPv6 address's brackets. */
function hostNames(hosts: readonly string[]): Set<string> {
  return new Set(hosts.flatMap((host) => [host, host.replace(/^\[(.*)\]$/, "$1")]));
}

/**
 * `host`, a host the system's words name, taken out of them (a hint quotes it), as `withHostAsWritten` names it
 * there: as config.yaml writes it when it is one of `hosts`, else as it is.
 */
export function hostAloneAsWritten(host: string, hosts: readonly string[], written: WrittenAs): string {
  return host !== "" && hostNames(hosts).has(host) ? describe(written) : host;
}

/**
 * `text` with a host a `${VAR}` gave (`hosts`: the value, and the name the connect used for it) named as
 * config.yaml writes it, `"${SMTP_HOST}" (the value it gives is not shown)`, where the system's messages name
 * it (`connect ECONNREFUSED <host>:<port>`, `getaddrinfo ENOTFOUND <host>`) and the hints made from them.
 */
export function withHostAsWritten(text: string, hosts: readonly string[], written: WrittenAs): string {
  return withHostNamed(text, hosts, describe(written));
}
