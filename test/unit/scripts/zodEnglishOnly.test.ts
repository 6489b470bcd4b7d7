import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { build, type Plugin } from "esbuild";
import { describe, expect, it } from "vitest";
import { zodEnglishOnly } from "../../../scripts/zodEnglishOnly.mjs";

const ROOT = join(import.meta.dirname, "../../..");
/** esbuild names each bundled module in a comment: `// node_modules/zod/v4/locales/fr.js`. */
const LOCALE_MODULE = /\/\/ (?:\.\.\/main\/)?node_modules\/zod\/v4\/locales\/([\w-]+)\.js/g;

async function bundle(plugins: Plugin[]): Promise<string> {
  const result = await build({
    stdin: {
      contents: `import { z } from "zod";
const parsed = z.object({ port: z.number() }).safeParse({ port: "eighty" });
export const message = parsed.error.issues[0].message;
export const locales = Object.keys(z.locales);`,
      resolveDir: ROOT,
      loader: "js",
    },
    bundle: true,
    format: "esm",
    platform: "node",
    write: false,
    logLevel: "silent",
    plugins,
  });
  return (result.outputFiles[0] as { text: string }).text;
}

async function run(code: string): Promise<{ message: string; locales: string[] }> {
  return import(`data:text/javascript;base64,${Buffer.from(code).toString("base64")}`);
}

const localesIn = (code: string) => [...new Set([...code.matchAll(LOCALE_MODULE)].map((m) => m[1]))];

describe("zod's locales in svc's bundles", () => {
  it("the plugin keeps English alone, and zod's messages stay the English ones", async () => {
    const plain = await bundle([]);
    expect(localesIn(plain).length).toBeGreaterThan(40);
    const trimmed = await bundle([zodEnglishOnly]);
    expect(localesIn(trimmed)).toEqual(["en"]);
    expect(trimmed.length).toBeLessThan(plain.length - 300_000);
    const [before, after] = [await run(plain), await run(trimmed)];
    expect(after.message).toBe(before.message);
    expect(after.message).toBe("Invalid input: expected number, received string");
    expect(after.locales).toEqual(["en"]);
  });

  it("the built `svc` command carries no other locale (npm run build uses the plugin)", () => {
    const dir = join(ROOT, "dist/cli");
    const found = readdirSync(dir)
      .filter((f) => f.endsWith(".js") || f.endsWith(".cjs"))
      .flatMap((f) => localesIn(readFileSync(join(dir, f), "utf8")));
    expect(found.length).toBeGreaterThan(0);
    expect([...new Set(found)]).toEqual(["en"]);
  });
});
