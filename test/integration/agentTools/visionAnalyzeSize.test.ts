import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { visionAnalyzeTool } from "../../../src/agent/tools/visionAnalyze.js";
import { toolsSchema } from "../../../src/config/sections/tools.js";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { toolContext } from "../../helpers/toolContext.js";

const web = { ...toolsSchema.parse({}).web, allow_private: true };
const PNG_SIGNATURE = "\x89PNG\r\n\x1a\n";

let site: FakeApi;
beforeEach(async () => {
  site = await startFakeApi((request) =>
    request.path === "/empty.png"
      ? { text: "", headers: { "content-type": "image/png" } }
      : { text: PNG_SIGNATURE + "x".repeat(8 * 1024 * 1024), headers: { "content-type": "image/png" } },
  );
});
afterEach(() => site.close());

const analyze = async (path: string) => {
  const asked: string[] = [];
  const outcome = await visionAnalyzeTool(web).execute(
    { image_url: `${site.url}${path}` },
    toolContext({ analyzeImage: async (url: string) => (asked.push(url), "seen") }),
  );
  return { outcome, asked };
};

describe("vision_analyze: an image it cannot hand on names the URL and why, before the model is asked", () => {
  it("an image past 8 MiB", async () => {
    expect(await analyze("/huge.png")).toEqual({
      outcome: {
        ok: false,
        error: `${site.url}/huge.png is larger than 8 MiB (8388608 bytes), the most vision_analyze downloads`,
      },
      asked: [],
    });
  });

  it("an empty answer labelled as an image", async () => {
    expect(await analyze("/empty.png")).toEqual({
      outcome: { ok: false, error: `${site.url}/empty.png is empty (0 bytes): there is no image to look at` },
      asked: [],
    });
  });
});
