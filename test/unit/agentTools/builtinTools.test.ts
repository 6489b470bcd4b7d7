import { statSync } from "node:fs";
import { basename } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_WEBHOOK_TOOLSETS } from "../../../src/actors/agent/runner.js";
import { builtinTools, createWorkspace, lazyWorkspace } from "../../../src/agent/tools/index.js";
import { toolsSchema } from "../../../src/config/sections/tools.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

const plain = toolsSchema.parse({});
const withSearch = toolsSchema.parse({ web_search: { backend: "searxng", url: "http://127.0.0.1:8080" } });
const names = (toolsets: readonly string[], settings = plain) =>
  builtinTools(toolsets, settings).map((t) => t.name);

describe("builtinTools: the tools of the toolsets a run may use", () => {
  it("the svc-webhook default set, web_search only with a backend", () => {
    expect(names(DEFAULT_WEBHOOK_TOOLSETS)).toEqual(["web_extract", "vision_analyze", "clarify"]);
    expect(names(DEFAULT_WEBHOOK_TOOLSETS, withSearch)).toEqual([
      "web_extract",
      "web_search",
      "vision_analyze",
      "clarify",
    ]);
  });

  it("web is web_extract + web_search; terminal and file only when named; MCP names ignored", () => {
    expect(names(["web", "web_extract"], withSearch)).toEqual(["web_extract", "web_search"]);
    expect(names(["terminal", "file", "github", "no_mcp"])).toEqual([
      "terminal",
      "file_read",
      "file_write",
      "file_list",
    ]);
    expect(names([])).toEqual([]);
  });

  it("every tool has an object JSON Schema", () => {
    const all = builtinTools(["web", "vision_analyze", "clarify", "terminal", "file"], withSearch);
    for (const tool of all) expect(tool.inputSchema.type).toBe("object");
  });

  it("vision_analyze's image_url offers both forms the tool takes: http(s) and data:image", () => {
    const schema = builtinTools(["vision_analyze"], withSearch)[0]?.inputSchema;
    const properties = schema?.properties as Record<string, { description: string }> | undefined;
    expect(properties?.image_url?.description).toMatch(/http\(s\) URL, or a data:image\/\.\.\.;base64, URL/);
  });
});

describe("createWorkspace", () => {
  let home: TempHome;
  afterEach(() => home.cleanup());

  it("makes $SVC_HOME/workspaces/<run> with mode 0700, a safe name for any run id, idempotently", async () => {
    home = tempHome();
    const dir = await createWorkspace(home.dir, "../../etc/passwd");
    expect(dir.startsWith(`${home.dir}/workspaces/`)).toBe(true);
    expect(basename(dir)).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(`${home.dir}/workspaces`).mode & 0o777).toBe(0o700);
    expect(await createWorkspace(home.dir, "../../etc/passwd")).toBe(dir);
    expect(await createWorkspace(home.dir, "../../etc/passwd2")).not.toBe(dir);
    const lazy = lazyWorkspace(home.dir, "run-2");
    expect(await lazy()).toBe(await lazy());
  });
});
