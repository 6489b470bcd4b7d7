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
 * error writes it (`urlForms`; any case), and its host, which the system's messages (`getaddrinfo ENOTFOUND
 * <host>`, `connect ECONNREFUSED <host>:<port>`) and the hints made from them name alone, as
 * `<the host of "${BASE}" (…)>`: never what the variable gave.
 */
export function withUrlAsWritten(text: string, url: string, written: WrittenAs): string {
  const quoted = describe(written);
  let shown = text;
  for (const form of urlForms(url))
    shown = shown.replace(new RegExp(regexpEscaped(form), "gi"), () => quoted);
  const host = URL.canParse(url) ? new URL(url).hostname : "";
  return withHostNamed(shown, [host], `<the host of ${quoted}>`);
}

/** `text` with each of the `hosts` (with or without an IPv6 address's brackets; any case) said as `shown`. */
function withHostNamed(text: string, hosts: readonly string[], shown: string): string {
  let named = text;
  const names = new Set(hosts.flatMap((host) => [host, host.replace(/^\[(.*)\]$/, "$1")]));
  for (const name of [...names].sort((a, b) => b.length - a.length))
    if (name !== "")
      named = named.replace(
        new RegExp(`(?<![\\w.:-])${regexpEscaped(name)}(?![\\w-]|\\.[\\w-])`, "gi"),
        () => shown,
      );
  return named;
}

/**
 * `text` with a host a `${VAR}` gave (`hosts`: the value, and the name the connect used for it) named as
 * config.yaml writes it, `"${SMTP_HOST}" (the value it gives is not shown)`, where the system's messages name
 * it (`connect ECONNREFUSED <host>:<port>`, `getaddrinfo ENOTFOUND <host>`) and the hints made from them.
 */
export function withHostAsWritten(text: string, hosts: readonly string[], written: WrittenAs): string {
  return withHostNamed(text, hosts, describe(written));
}
