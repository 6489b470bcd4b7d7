import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { writeSchemaCache } from "../../../src/io/mcp/schemaCache.js";
import { stdioEntry, useHubs } from "./harness.js";

const ctx = useHubs();

describe("a server with a schema cache from an earlier connect", () => {
  it("is shown as cached, and registers none of the cached tools", async () => {
    const first = ctx.hub(ctx.home, { fx: stdioEntry("legacy") });
    expect((await first.settled("fx")).state).toBe("connected");
    await first.stop();
    const h = ctx.hub(ctx.home, { fx: stdioEntry("legacy", { enabled: false }) });
    expect(await h.settled("fx")).toMatchObject({ state: "skipped", cached: true, toolCount: 0 });
    expect(h.tools()).toEqual([]);
  });

  it("an eager server whose connect fails is shown as cached too (as the offline svc mcp list shows it)", async () => {
    // ${NODE_BIN} is not set here: the command is not found, and no process starts.
    // biome-ignore lint/suspicious/noTemplateCurlyInString: an svc ${VAR} placeholder
    const node = stdioEntry("legacy", { command: "${NODE_BIN}" });
    writeSchemaCache(
      join(ctx.home.dir, "mcp-cache"),
      "fx",
      node,
      [{ name: "echo", inputSchema: { type: "object" } }],
      {
        resources: false,
        prompts: false,
      },
    );
    const h = ctx.hub(ctx.home, { fx: node });
    expect(await h.settled("fx")).toMatchObject({ state: "failed", cached: true, toolCount: 0 });
  });
});
