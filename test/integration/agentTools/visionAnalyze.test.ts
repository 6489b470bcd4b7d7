import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { visionAnalyzeTool } from "../../../src/agent/tools/visionAnalyze.js";
import { toolsSchema } from "../../../src/config/sections/tools.js";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { outcomeText, toolContext } from "../../helpers/toolContext.js";

const web = toolsSchema.parse({}).web;
const PNG = "\x89PNG-bytes";

let site: FakeApi;
beforeEach(async () => {
  site = await startFakeApi(() => ({ text: PNG, headers: { "content-type": "image/png" } }));
});
afterEach(() => site.close());

function recordingModel() {
  const calls: { url: string; question: string }[] = [];
  return {
    calls,
    analyzeImage: async (url: string, question: string) => {
      calls.push({ url, question });
      return "a cat on a keyboard";
    },
  };
}

describe("vision_analyze", () => {
  it("without a model that can see images, answers with a clear tool error", async () => {
    const outcome = await visionAnalyzeTool(web).execute({ image_url: `${site.url}/a.png` }, toolContext());
    expect(outcome).toEqual({ ok: false, error: expect.stringContaining("no model that can see images") });
    expect(site.requests).toHaveLength(0);
  });

  it("downloads the image and asks the run's model with it as a data: URL", async () => {
    const model = recordingModel();
    const tool = visionAnalyzeTool({ ...web, allow_private: true });
    const outcome = await tool.execute(
      { image_url: `${site.url}/a.png`, question: "What animal?" },
      toolContext({ analyzeImage: model.analyzeImage }),
    );
    expect(outcomeText(outcome)).toBe("a cat on a keyboard");
    expect(model.calls).toEqual([
      { url: `data:image/png;base64,${Buffer.from(PNG).toString("base64")}`, question: "What animal?" },
    ]);
    // The types the model takes, not image/* (for which a negotiating image server may pick AVIF).
    expect(site.requests[0]?.headers.accept).toBe("image/jpeg,image/png,image/gif,image/webp");
  });

  it("refuses private addresses by default, before the model is asked", async () => {
    const model = recordingModel();
    const outcome = await visionAnalyzeTool(web).execute(
      { image_url: `${site.url}/a.png` },
      toolContext({ analyzeImage: model.analyzeImage }),
    );
    expect(outcome).toMatchObject({ ok: false, error: expect.stringContaining("is a private") });
    expect(model.calls).toHaveLength(0);
    expect(site.requests).toHaveLength(0);
  });

  it("refuses what is not an image, and passes data:image URLs through with the default question", async () => {
    const model = recordingModel();
    const context = toolContext({ analyzeImage: model.analyzeImage });
    site.enqueue({ text: "<html>", headers: { "content-type": "text/html" } });
    const tool = visionAnalyzeTool({ ...web, allow_private: true });
    expect(await tool.execute({ image_url: `${site.url}/page` }, context)).toMatchObject({
      ok: false,
      error: expect.stringContaining("not an image"),
    });
    await tool.execute({ image_url: "data:image/gif;base64,R0lGOD" }, context);
    expect(model.calls).toEqual([
      { url: "data:image/gif;base64,R0lGOD", question: "Describe this image in detail." },
    ]);
  });

  it("refuses an image type the model APIs do not take (SVG, BMP, ...) before the model is asked, and names image/jpg as image/jpeg", async () => {
    const model = recordingModel();
    const context = toolContext({ analyzeImage: model.analyzeImage });
    const tool = visionAnalyzeTool({ ...web, allow_private: true });
    site.enqueue(
      { text: "<svg/>", headers: { "content-type": "image/svg+xml; charset=utf-8" } },
      { text: "BM", headers: { "content-type": "image/bmp" } },
      { text: "\xff\xd8", headers: { "content-type": "Image/JPG" } },
    );
    expect(await tool.execute({ image_url: `${site.url}/logo.svg` }, context)).toEqual({
      ok: false,
      error: `${site.url}/logo.svg is image/svg+xml: the model takes JPEG, PNG, GIF and WebP images`,
    });
    expect(await tool.execute({ image_url: `${site.url}/a.bmp` }, context)).toEqual({
      ok: false,
      error: `${site.url}/a.bmp is image/bmp: the model takes JPEG, PNG, GIF and WebP images`,
    });
    expect(await tool.execute({ image_url: `${site.url}/a.jpg` }, context)).toMatchObject({ ok: true });
    expect(await tool.execute({ image_url: "data:image/svg+xml;base64,PHN2Zy8+" }, context)).toEqual({
      ok: false,
      error: "the data: URL holds image/svg+xml: the model takes JPEG, PNG, GIF and WebP images",
    });
    expect(await tool.execute({ image_url: "data:image/JPG;base64,/9j/" }, context)).toMatchObject({
      ok: true,
    });
    expect(model.calls.map((call) => call.url)).toEqual([
      `data:image/jpeg;base64,${Buffer.from("\xff\xd8").toString("base64")}`,
      "data:image/jpeg;base64,/9j/",
    ]);
  });

  it("goes by an image's bytes, as the model SDK does: a PNG sent as image/x-png or application/octet-stream is taken as image/png", async () => {
    const png = Buffer.from("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489", "hex");
    const server = createServer((req, res) => {
      res.writeHead(200, { "content-type": req.url === "/old" ? "image/x-png" : "application/octet-stream" });
      res.end(png);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const model = recordingModel();
      const context = toolContext({ analyzeImage: model.analyzeImage });
      const tool = visionAnalyzeTool({ ...web, allow_private: true });
      for (const path of ["/old", "/octets"])
        expect(await tool.execute({ image_url: `http://127.0.0.1:${port}${path}` }, context)).toMatchObject({
          ok: true,
        });
      const dataUrl = `data:image/x-png;base64,${png.toString("base64")}`;
      expect(await tool.execute({ image_url: dataUrl }, context)).toMatchObject({ ok: true });
      expect(model.calls.map((call) => call.url)).toEqual(
        Array(3).fill(`data:image/png;base64,${png.toString("base64")}`),
      );
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("reads the data: scheme in any case, as URL schemes are (DATA:image/png;base64,...)", async () => {
    const model = recordingModel();
    const tool = visionAnalyzeTool(web);
    const context = toolContext({ analyzeImage: model.analyzeImage });
    expect(await tool.execute({ image_url: "DATA:image/png;base64,iVBORw0K" }, context)).toMatchObject({
      ok: true,
    });
    expect(await tool.execute({ image_url: "Data:text/html;base64,PGI+" }, context)).toEqual({
      ok: false,
      error: "a data: URL must hold a base64 image (data:image/png;base64,...)",
    });
    // Handed on with the scheme as the model APIs spell it.
    expect(model.calls.map((call) => call.url)).toEqual(["data:image/png;base64,iVBORw0K"]);
  });
});
