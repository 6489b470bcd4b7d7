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
  for (const name of new Set([host, host.replace(/^\[(.*)\]$/, "$1")]))
    if (name !== "")
      shown = shown.replace(
        new RegExp(`(?<![\\w.:-])${regexpEscaped(name)}(?![\\w-]|\\.[\\w-])`, "gi"),
        () => `<the host of ${quoted}>`,
      );
  return shown;
}
