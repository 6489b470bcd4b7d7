import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { webExtractTool } from "../../../src/agent/tools/webExtract.js";
import { toolsSchema } from "../../../src/config/sections/tools.js";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { toolContext } from "../../helpers/toolContext.js";

const BODY = "openapi: 3.1.0\ninfo: { title: Pets }\n";

let site: FakeApi;
beforeEach(async () => {
  site = await startFakeApi((request) => ({
    text: BODY,
    headers: { "content-type": request.query.get("type") ?? "" },
  }));
});
afterEach(() => site.close());

const extract = (type: string) =>
  webExtractTool({ ...toolsSchema.parse({}).web, allow_private: true }).execute(
    { url: `${site.url}/spec?type=${encodeURIComponent(type)}` },
    toolContext(),
  );

describe("web_extract: text served under an application/ type is read as text", () => {
  it.each([
    "application/yaml",
    "application/x-yaml",
    "application/openapi+yaml",
    "application/toml",
    "application/x-ndjson",
    "application/x-javascript",
    "application/ecmascript",
    "application/x-sh",
    "application/sql",
    "application/graphql",
  ])("%s", async (type) => {
    expect(await extract(type)).toEqual({
      ok: true,
      content: [
        {
          type: "text",
          text: `URL: ${site.url}/spec?type=${encodeURIComponent(type)}\n\nopenapi: 3.1.0\ninfo: { title: Pets }`,
        },
      ],
    });
  });

  it("still refuses what is not text", async () => {
    for (const type of ["application/octet-stream", "application/zip", "application/pdf"])
      expect(await extract(type)).toMatchObject({ ok: false, error: expect.stringContaining(`is ${type}`) });
  });
});
