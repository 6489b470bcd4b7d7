import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { webSearchTool } from "../../../src/agent/tools/webSearch.js";
import { toolsSchema, type WebSearchSettings } from "../../../src/config/sections/tools.js";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { toolContext } from "../../helpers/toolContext.js";

function settings(backend: WebSearchSettings["backend"], url: string): WebSearchSettings {
  const parsed = toolsSchema.parse({
    web_search: { backend, url, ...(backend === "searxng" ? {} : { api_key: "key-123456" }) },
  });
  if (parsed.web_search === undefined) throw new Error("web_search not parsed");
  return parsed.web_search;
}

let api: FakeApi;
let host: string;
beforeEach(async () => {
  api = await startFakeApi();
  host = new URL(api.url).host;
});
afterEach(() => api.close());

const search = (backend: WebSearchSettings["backend"]) =>
  webSearchTool(settings(backend, api.url)).execute({ query: "q" }, toolContext());

describe("web_search: a backend's rate limit (HTTP 429) says when to search again", () => {
  it("names the wait its Retry-After asks for", async () => {
    api.enqueue({
      status: 429,
      headers: { "retry-after": "30" },
      json: { detail: { error: "Too many requests" } },
    });
    expect(await search("tavily")).toEqual({
      ok: false,
      error: `web_search (tavily): ${host} answered HTTP 429: Too many requests — the backend's rate limit was reached: search again in 30 s at the earliest`,
    });
  });

  it("takes Brave's X-RateLimit-Reset (seconds to the reset of each window, the first the shortest) when there is no Retry-After", async () => {
    api.enqueue({
      status: 429,
      headers: { "x-ratelimit-limit": "1, 2000", "x-ratelimit-reset": "1, 1419704" },
      json: { error: { code: "RATE_LIMITED", detail: "Request rate limit exceeded for plan.", status: 429 } },
    });
    expect(await search("brave")).toEqual({
      ok: false,
      error: `web_search (brave): ${host} answered HTTP 429: Request rate limit exceeded for plan. — the backend's rate limit was reached: search again in 1 s at the earliest`,
    });
  });

  it("without a wait named, says the limit was reached (a SearXNG limiter's bare 429)", async () => {
    api.enqueue({
      status: 429,
      headers: { "content-type": "text/html" },
      text: "<h1>Too Many Requests</h1>",
    });
    expect(await search("searxng")).toEqual({
      ok: false,
      error: `web_search (searxng): ${host} answered HTTP 429 — the backend's rate limit was reached: search less often, or go on with the results you have`,
    });
  });
});
