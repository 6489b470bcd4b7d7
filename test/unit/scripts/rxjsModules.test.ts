import { join } from "node:path";
import { build, type Plugin } from "esbuild";
import { describe, expect, it } from "vitest";
import { rxjsModules } from "../../../scripts/rxjsModules.mjs";

const ROOT = join(import.meta.dirname, "../../..");
/** esbuild names each bundled module in a comment: `// node_modules/rxjs/dist/esm/internal/operators/map.js`. */
const RXJS_MODULE = /\/\/ (?:\.\.\/main\/)?node_modules\/rxjs\/dist\/(\w+)\/\S+\.js/g;

/** A module using two of rxjs's operators, bundled for Node as svc's bundles are. */
async function bundle(plugins: Plugin[]): Promise<string> {
  const result = await build({
    stdin: {
      contents: `import { from, map, lastValueFrom } from "rxjs";
export const last = await lastValueFrom(from([1, 2, 3]).pipe(map((n) => n * 2)));`,
      resolveDir: ROOT,
      loader: "js",
    },
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    write: false,
    logLevel: "silent",
    plugins,
  });
  return (result.outputFiles[0] as { text: string }).text;
}

const builds = (code: string) => new Set([...code.matchAll(RXJS_MODULE)].map((m) => m[1]));
const modules = (code: string) => [...code.matchAll(RXJS_MODULE)].length;

describe("rxjs in svc's bundles", () => {
  it("the plugin takes rxjs's ES-module build, of which only the modules used are bundled, and it runs alike", async () => {
    const plain = await bundle([]);
    const plugged = await bundle([rxjsModules]);
    expect(builds(plain)).toEqual(new Set(["cjs"]));
    expect(builds(plugged)).toEqual(new Set(["esm"]));
    expect(modules(plugged)).toBeLessThan(modules(plain) / 3);
    expect(plugged.length).toBeLessThan(plain.length / 3);
    const run = (code: string) =>
      import(`data:text/javascript;base64,${Buffer.from(code).toString("base64")}`) as Promise<{
        last: number;
      }>;
    expect((await run(plugged)).last).toBe(6);
    expect((await run(plain)).last).toBe(6);
  });
});
