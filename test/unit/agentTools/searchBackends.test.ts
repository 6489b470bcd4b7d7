import { describe, expect, it } from "vitest";
import { searchRequest } from "../../../src/agent/tools/webSearch/backends.js";
import { toolsSchema } from "../../../src/config/sections/tools.js";

function searxng(url: string) {
  const settings = toolsSchema.parse({ web_search: { backend: "searxng", url } }).web_search;
  if (settings === undefined) throw new Error("web_search not parsed");
  return new URL(searchRequest(settings, "q", 5).url);
}

describe("searchRequest: SearXNG's endpoint from tools.web_search.url", () => {
  it("adds /search to the instance, and keeps a url that names it (with or without a trailing slash)", () => {
    expect(searxng("http://127.0.0.1:8080").pathname).toBe("/search");
    expect(searxng("http://127.0.0.1:8080/").pathname).toBe("/search");
    expect(searxng("https://host/searx/").pathname).toBe("/searx/search");
    expect(searxng("http://127.0.0.1:8080/search").pathname).toBe("/search");
    expect(searxng("http://127.0.0.1:8080/search/").pathname).toBe("/search");
    expect(searxng("https://host/searx/search/").pathname).toBe("/searx/search");
    expect(searxng("http://127.0.0.1:8080/search/").search).toBe("?q=q&format=json");
  });
});
