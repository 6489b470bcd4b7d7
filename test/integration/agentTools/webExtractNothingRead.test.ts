import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { webExtractTool } from "../../../src/agent/tools/webExtract.js";
import { toolsSchema } from "../../../src/config/sections/tools.js";
import { type FakeApi, type FakeReply, startFakeApi } from "../../fakes/httpFake.js";
import { outcomeText, toolContext } from "../../helpers/toolContext.js";

const html = (text: string): FakeReply => ({ text, headers: { "content-type": "text/html; charset=utf-8" } });

const pages: Record<string, FakeReply> = {
  "/app": html(
    '<html><head><title>Dashboard</title></head><body><div id="root"></div><script>render()</script></body></html>',
  ),
  "/empty": html(""),
  "/blank.txt": { text: " \n\t\n", headers: { "content-type": "text/plain" } },
  "/loop": { status: 302, headers: { location: "/loop" } },
  "/bad-location": { status: 301, headers: { location: "http://[::zz/" } },
};

let site: FakeApi;
beforeEach(async () => {
  site = await startFakeApi((request) => pages[request.path] ?? { status: 404 });
});
afterEach(() => site.close());

const extract = (path: string) =>
  webExtractTool({ ...toolsSchema.parse({}).web, allow_private: true }).execute(
    { url: `${site.url}${path}` },
    toolContext(),
  );

describe("web_extract: a page it reads nothing from, and redirects it cannot follow, say why", () => {
  it("says a page has no readable text (one built by JavaScript) rather than answering a blank", async () => {
    expect(outcomeText(await extract("/app"))).toBe(
      `URL: ${site.url}/app\nTitle: Dashboard\n\n` +
        "(the page has no readable text: its content may be built by JavaScript in the browser, which web_extract does not run)",
    );
  });

  it("says a page is empty or holds only whitespace", async () => {
    expect(outcomeText(await extract("/empty"))).toBe(`URL: ${site.url}/empty\n\n(the page is empty)`);
    expect(outcomeText(await extract("/blank.txt"))).toBe(
      `URL: ${site.url}/blank.txt\n\n(the page holds only whitespace: 4 bytes)`,
    );
  });

  it("names the redirect limit and where the last redirect led", async () => {
    expect(await extract("/loop")).toEqual({
      ok: false,
      error: `too many redirects: more than 5, the last from ${site.url}/loop to ${site.url}/loop`,
    });
  });

  it("names a Location that is no URL instead of a system code", async () => {
    expect(await extract("/bad-location")).toEqual({
      ok: false,
      error: `HTTP 301 from ${site.url}/bad-location: a redirect to "http://[::zz/", which is not a URL`,
    });
  });
});
