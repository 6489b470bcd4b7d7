import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cacheKey, readSchemaCache } from "../../../src/io/mcp/schemaCache.js";
import { stdioEntry, text, useHubs } from "./harness.js";

const ctx = useHubs();

const capabilities = { resources: true, prompts: false };

/** Cache files of the right name and fingerprint whose content is not of the shape svc writes. */
const malformed: Record<string, (print: string) => unknown> = {
  "a tool entry that is null": (print) => ({ version: 1, fingerprint: print, tools: [null], capabilities }),
  "a tool whose name is not text": (print) => ({
    version: 1,
    fingerprint: print,
    tools: [{ name: 5, inputSchema: { type: "object" } }],
    capabilities,
  }),
  "no capabilities": (print) => ({ version: 1, fingerprint: print, tools: [{ name: "echo" }] }),
  "capabilities that are not switches": (print) => ({
    version: 1,
    fingerprint: print,
    tools: [],
    capabilities: { resources: "yes" },
  }),
  "JSON null": () => null,
};

function writeCache(name: string, entry: ReturnType<typeof stdioEntry>, content: unknown): void {
  const dir = join(ctx.home.dir, "mcp-cache");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${cacheKey(name, entry)}.json`), JSON.stringify(content));
}

/**
 * A schema cache file edited by hand, or written under its name by something else, is no cache: the
 * lazy server connects as without one (and writes a good cache), rather than the hub throwing at start,
 * which stopped the gateway's start and `svc mcp list` with a TypeError.
 */
describe("a lazy server whose schema cache file is malformed", () => {
  for (const [shape, content] of Object.entries(malformed)) {
    it(`reads no cache from one with ${shape}`, () => {
      const entry = stdioEntry("legacy", { lazy: true });
      writeCache("fx", entry, content(cacheKey("fx", entry)));
      expect(readSchemaCache(join(ctx.home.dir, "mcp-cache"), "fx", entry)).toBeUndefined();
    });
  }

  it("connects at start, serves its tools, and leaves a cache the next start registers from", async () => {
    const entry = stdioEntry("legacy", { lazy: true, tools: { resources: true } });
    writeCache("fx", entry, { version: 1, fingerprint: cacheKey("fx", entry), tools: [null], capabilities });
    const h = ctx.hub(ctx.home, { fx: entry });
    expect(await h.settled("fx")).toMatchObject({ state: "connected" });
    expect(text(await h.call("fx", "echo", { text: "hi" }))).toContain("hi");
    await h.stop();
    const next = ctx.hub(ctx.home, { fx: entry });
    expect(next.status()).toMatchObject([{ name: "fx", state: "lazy", cached: true }]);
  });
});
