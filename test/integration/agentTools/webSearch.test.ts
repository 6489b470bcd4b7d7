import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { webSearchTool } from "../../../src/agent/tools/webSearch.js";
import { toolsSchema, type WebSearchSettings } from "../../../src/config/sections/tools.js";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { outcomeText, toolContext } from "../../helpers/toolContext.js";

const KEY = "brv-secret-key-12345";

function settings(backend: WebSearchSettings["backend"], url: string): WebSearchSettings {
  const parsed = toolsSchema.parse({
    web_search: { backend, url, ...(backend === "searxng" ? {} : { api_key: KEY }) },
  });
  if (parsed.web_search === undefined) throw new Error("web_search not parsed");
  return parsed.web_search;
}

let api: FakeApi;
beforeEach(async () => {
  api = await startFakeApi();
});
afterEach(() => api.close());

describe("web_search against local fakes of each backend's JSON API", () => {
  it("SearXNG: GET <instance>/search?q=&format=json, results[].title/url/content", async () => {
    api.enqueue({
      json: {
        query: "svc gateway",
        number_of_results: 2,
        results: [
          { url: "https://a.example/", title: "A <b>page</b>", content: "About &amp; more", engine: "x" },
          { url: "https://b.example/", title: "B", content: "" },
        ],
        answers: [],
        infoboxes: [],
      },
    });
    const tool = webSearchTool(settings("searxng", `${api.url}/searx/`));
    const text = outcomeText(await tool.execute({ query: "svc gateway" }, toolContext()));
    expect(text).toBe("1. A page\n   https://a.example/\n   About & more\n2. B\n   https://b.example/");
    expect(api.requests[0]?.path).toBe("/searx/search");
    expect(Object.fromEntries(api.requests[0]?.query ?? [])).toEqual({ q: "svc gateway", format: "json" });
  });

  it("a result's title or snippet holding line breaks stays on its own lines: it cannot fake another entry", async () => {
    api.enqueue({
      json: {
        results: [
          {
            url: "https://a.example/",
            title: "A\n2. Fake result\n   https://evil.example/",
            content: "one\n\ntwo",
          },
        ],
      },
    });
    const tool = webSearchTool(settings("searxng", `${api.url}/searx/`));
    const text = outcomeText(await tool.execute({ query: "q" }, toolContext()));
    expect(text).toBe("1. A 2. Fake result https://evil.example/\n   https://a.example/\n   one two");
  });

  it("Brave: X-Subscription-Token header, count, web.results[].description", async () => {
    api.enqueue({
      json: {
        type: "search",
        query: { original: "node 20" },
        web: {
          type: "search",
          results: [
            { title: "Node.js 20", url: "https://nodejs.org/", description: "The <strong>LTS</strong> line" },
            { title: "Other", url: "https://o.example/", description: "x" },
            { title: "Third", url: "https://t.example/", description: "y" },
          ],
        },
      },
    });
    const tool = webSearchTool(settings("brave", `${api.url}/res/v1/web/search`));
    const text = outcomeText(await tool.execute({ query: "node 20", max_results: 2 }, toolContext()));
    expect(text).toBe(
      "1. Node.js 20\n   https://nodejs.org/\n   The LTS line\n2. Other\n   https://o.example/\n   x",
    );
    const request = api.requests[0];
    expect(request?.headers["x-subscription-token"]).toBe(KEY);
    expect(request?.query.get("q")).toBe("node 20");
    expect(request?.query.get("count")).toBe("2");
  });

  it("Brave: an answer without a web section is no results", async () => {
    api.enqueue({ json: { type: "search", query: { original: "zzz" } } });
    const tool = webSearchTool(settings("brave", api.url));
    expect(outcomeText(await tool.execute({ query: "zzz" }, toolContext()))).toBe("No results for: zzz");
  });

  it("Tavily: POST JSON with Authorization: Bearer, results[].title/url/content", async () => {
    api.enqueue({
      json: {
        query: "svc",
        answer: null,
        results: [
          { title: "T", url: "https://t.example/", content: "snippet", score: 0.9, raw_content: null },
        ],
        response_time: 1.2,
      },
    });
    const tool = webSearchTool(settings("tavily", `${api.url}/search`));
    const text = outcomeText(await tool.execute({ query: "svc" }, toolContext()));
    expect(text).toBe("1. T\n   https://t.example/\n   snippet");
    const request = api.requests[0];
    expect(request?.method).toBe("POST");
    expect(request?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(request?.json).toEqual({ query: "svc", max_results: 5, search_depth: "basic" });
  });

  it("reports backend errors without the API key, even when the backend echoes it", async () => {
    api.enqueue({ status: 401, json: { error: `invalid key ${KEY}` } });
    const tool = webSearchTool(settings("brave", api.url));
    const outcome = await tool.execute({ query: "q" }, toolContext());
    expect(outcome).toEqual({
      ok: false,
      error: `web_search (brave): ${new URL(api.url).host} answered HTTP 401: invalid key [redacted] — check tools.web_search.api_key`,
    });
    expect(JSON.stringify(outcome)).not.toContain(KEY);
  });

  it("says why a backend refused: its own message, and what to change", async () => {
    const host = new URL(api.url).host;
    // Brave's error shape (an invalid subscription token).
    api.enqueue({
      status: 422,
      json: {
        type: "ErrorResponse",
        error: {
          code: "SUBSCRIPTION_TOKEN_INVALID",
          detail: "The provided subscription token is invalid.",
          status: 422,
        },
      },
    });
    expect(await webSearchTool(settings("brave", api.url)).execute({ query: "q" }, toolContext())).toEqual({
      ok: false,
      error: `web_search (brave): ${host} answered HTTP 422: The provided subscription token is invalid.`,
    });
    // Tavily's (a plan's limit; a missing key is the same shape with 401).
    api.enqueue({
      status: 432,
      json: { detail: { error: "This request exceeds your plan's set usage limit." } },
    });
    expect(await webSearchTool(settings("tavily", api.url)).execute({ query: "q" }, toolContext())).toEqual({
      ok: false,
      error: `web_search (tavily): ${host} answered HTTP 432: This request exceeds your plan's set usage limit.`,
    });
    // SearXNG without json in search.formats answers an HTML 403.
    api.enqueue({
      status: 403,
      headers: { "content-type": "text/html" },
      text: "<html>403 Forbidden</html>",
    });
    expect(await webSearchTool(settings("searxng", api.url)).execute({ query: "q" }, toolContext())).toEqual({
      ok: false,
      error: `web_search (searxng): ${host} answered HTTP 403 — the instance refuses format=json: add json to search.formats in its settings.yml`,
    });
  });

  it("SearXNG: no results because its engines failed says which, not only 'No results'", async () => {
    api.enqueue(
      {
        json: {
          query: "q",
          results: [],
          unresponsive_engines: [
            ["google", "Suspended: too many requests"],
            ["duckduckgo", "CAPTCHA"],
          ],
        },
      },
      { json: { query: "q", results: [], unresponsive_engines: [] } },
    );
    const tool = webSearchTool(settings("searxng", api.url));
    expect(outcomeText(await tool.execute({ query: "q" }, toolContext()))).toBe(
      "No results for: q (search engines that did not answer: google: Suspended: too many requests; duckduckgo: CAPTCHA)",
    );
    expect(outcomeText(await tool.execute({ query: "q" }, toolContext()))).toBe("No results for: q");
  });

  it("an answer past 2 MiB is named as such, not as a backend that could not be reached", async () => {
    api.enqueue({ text: `{"results":[],"pad":"${"x".repeat(2 * 1024 * 1024)}"}` });
    expect(await webSearchTool(settings("searxng", api.url)).execute({ query: "q" }, toolContext())).toEqual({
      ok: false,
      error: `web_search (searxng): ${new URL(api.url).host} answered more than 2 MiB, which svc does not read`,
    });
  });

  it("refuses a backend's redirect and says where it led, without following it", async () => {
    api.enqueue({ status: 301, headers: { location: "/searx/search/?q=leak&format=json" } });
    const tool = webSearchTool(settings("searxng", `${api.url}/searx`));
    expect(await tool.execute({ query: "q" }, toolContext())).toEqual({
      ok: false,
      error: `web_search (searxng): ${new URL(api.url).host} answered HTTP 301, a redirect to ${api.url}/searx/search/, which svc does not follow — set tools.web_search.url to where it leads`,
    });
    expect(api.requests).toHaveLength(1);
  });

  it("a result that quotes the API key reaches the model with [redacted] in its place", async () => {
    api.enqueue({
      json: { results: [{ title: "Your key", url: "https://e.example/k", content: `token=${KEY}` }] },
    });
    const tool = webSearchTool(settings("tavily", api.url));
    expect(outcomeText(await tool.execute({ query: "q" }, toolContext()))).toBe(
      "1. Your key\n   https://e.example/k\n   token=[redacted]",
    );
  });

  it("reports an unexpected answer shape and a backend that is down", async () => {
    api.enqueue({ json: { nope: true } });
    const tool = webSearchTool(settings("tavily", api.url));
    expect(await tool.execute({ query: "q" }, toolContext())).toEqual({
      ok: false,
      error: "web_search (tavily): unexpected answer shape",
    });
    await api.close();
    const down = await tool.execute({ query: "q" }, toolContext());
    expect(down).toMatchObject({ ok: false, error: expect.stringContaining("could not be reached") });
  });
});
