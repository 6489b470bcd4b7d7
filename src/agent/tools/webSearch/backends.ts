import type { WebSearchSettings } from "../../../config/sections/tools.js";
import type { JsonRequest } from "../../../io/web/fetchJson.js";
import { htmlToText } from "../web/htmlText.js";

export interface SearchHit {
  readonly title: string;
  readonly url: string;
  readonly snippet: string;
}

export const BRAVE_URL = "https://api.search.brave.com/res/v1/web/search";
export const TAVILY_URL = "https://api.tavily.com/search";

/**
 * SearXNG's `url` is the instance; its JSON answers come from `/search?format=json`. A url naming that
 * endpoint already (`.../search`, also with a trailing slash, as the browser's address bar shows it) is
 * used as it is.
 */
function searxngEndpoint(base: string): URL {
  const url = new URL(base);
  const path = url.pathname.replace(/\/+$/, "");
  url.pathname = path.endsWith("/search") ? path : `${path}/search`;
  return url;
}

/** The HTTP request that asks `settings.backend` for `count` results of `query`. */
export function searchRequest(settings: WebSearchSettings, query: string, count: number): JsonRequest {
  const key = settings.api_key ?? "";
  switch (settings.backend) {
    case "searxng": {
      const url = searxngEndpoint(settings.url ?? "");
      url.searchParams.set("q", query);
      url.searchParams.set("format", "json");
      return { url: url.href, method: "GET", headers: { accept: "application/json" } };
    }
    case "brave": {
      const url = new URL(settings.url ?? BRAVE_URL);
      url.searchParams.set("q", query);
      url.searchParams.set("count", String(count));
      return {
        url: url.href,
        method: "GET",
        headers: { accept: "application/json", "x-subscription-token": key },
      };
    }
    case "tavily":
      return {
        url: settings.url ?? TAVILY_URL,
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body: JSON.stringify({ query, max_results: count, search_depth: "basic" }),
      };
  }
}

const str = (value: unknown): string => (typeof value === "string" ? value : "");

function hitsFrom(items: unknown, snippetKey: string): SearchHit[] | undefined {
  if (!Array.isArray(items)) return undefined;
  return items
    .filter((item): item is Record<string, unknown> => typeof item === "object" && item !== null)
    .map((item) => ({
      title: htmlToText(str(item.title)).text,
      url: str(item.url),
      snippet: htmlToText(str(item[snippetKey])).text,
    }))
    .filter((hit) => hit.url !== "");
}

/**
 * The hits in a backend's answer: SearXNG `results[].{title,url,content}`, Brave
 * `web.results[].{title,url,description}`, Tavily `results[].{title,url,content}`. Undefined when the
 * answer does not have that shape.
 */
export function parseHits(backend: WebSearchSettings["backend"], json: unknown): SearchHit[] | undefined {
  if (typeof json !== "object" || json === null) return undefined;
  const answer = json as Record<string, unknown>;
  if (backend === "brave") {
    const web = answer.web as Record<string, unknown> | undefined;
    // No `web` section: Brave found nothing for the query.
    return web === undefined ? [] : hitsFrom(web.results, "description");
  }
  return hitsFrom(answer.results, "content");
}

/**
 * What the operator can do about a backend's refusal: a key refused (401, 403), or a SearXNG instance
 * that serves no JSON (its 403 when `json` is not in `search.formats`); a rate limit (429) and the wait it asks. Empty when the status says
 * nothing svc can name (the backend's own message, when it sent one, is in the error already).
 */
export function failureHint(
  backend: WebSearchSettings["backend"],
  status: number | undefined,
  waitSeconds?: number,
): string {
  // Said, or the model searches again at once and is refused again.
  if (status === 429)
    return waitSeconds === undefined
      ? " — the backend's rate limit was reached: search less often, or go on with the results you have"
      : ` — the backend's rate limit was reached: search again in ${Math.ceil(waitSeconds)} s at the earliest`;
  if (backend === "searxng") {
    return status === 403
      ? " — the instance refuses format=json: add json to search.formats in its settings.yml"
      : "";
  }
  return status === 401 || status === 403 ? " — check tools.web_search.api_key" : "";
}

/**
 * Why an answer holds no results when the backend says so: SearXNG lists the engines that failed
 * (`unresponsive_engines: [["google", "Suspended: too many requests"], ...]`), and with every engine
 * failing its empty list means "could not search", not "nothing exists". Empty otherwise.
 */
export function noResultsNote(backend: WebSearchSettings["backend"], json: unknown): string {
  if (backend !== "searxng" || typeof json !== "object" || json === null) return "";
  const failed = (json as Record<string, unknown>).unresponsive_engines;
  if (!Array.isArray(failed) || failed.length === 0) return "";
  const named = failed
    .slice(0, 5)
    .map((entry) => (Array.isArray(entry) ? entry.filter((part) => typeof part === "string").join(": ") : ""))
    .filter((text) => text !== "");
  const more = failed.length > 5 ? `, and ${failed.length - 5} more` : "";
  return named.length === 0 ? "" : ` (search engines that did not answer: ${named.join("; ")}${more})`;
}
