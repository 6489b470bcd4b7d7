import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { expect, it } from "vitest";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { tempHome } from "../../helpers/home.js";

/** A fixture of its own (a bundle directory no other test shares), bundled; its directory goes at the end. */
async function withFixture(source: string, use: (path: string) => void): Promise<void> {
  const home = tempHome();
  const path = await bundledFixture(home.write("fixture.mjs", `// ${randomUUID()}\n${source}`));
  try {
    use(path);
  } finally {
    rmSync(dirname(path), { recursive: true, force: true });
    home.cleanup();
  }
}

const cacheFiles = (path: string) => readdirSync(dirname(path)).filter((name) => name.endsWith(".cache"));

it("a fixture bundled as CommonJS writes its code cache at its first clean exit, and rewrites one V8 rejects", async () => {
  await withFixture(
    'import { platform } from "node:os";\nprocess.stdout.write("ran on " + platform() + "\\n");\n',
    (path) => {
      expect(basename(path)).toBe("fixture.mjs");
      expect(existsSync(join(dirname(path), "fixture.bundle.cjs"))).toBe(true);
      expect(cacheFiles(path)).toEqual([]);
      expect(execFileSync(process.execPath, [path], { encoding: "utf8" })).toBe(
        `ran on ${process.platform}\n`,
      );
      const [cache] = cacheFiles(path);
      expect(cache).toMatch(/^fixture\.v8-.+\.cache$/);
      const cachePath = join(dirname(path), cache as string);
      writeFileSync(cachePath, "not a code cache");
      expect(execFileSync(process.execPath, [path], { encoding: "utf8" })).toBe(
        `ran on ${process.platform}\n`,
      );
      expect(readFileSync(cachePath, "latin1")).not.toBe("not a code cache");
      expect(cacheFiles(path)).toEqual([cache]);
    },
  );
});

it("a fixture that awaits at its top level stays an ES-module bundle of its own name", async () => {
  await withFixture('await Promise.resolve();\nprocess.stdout.write("ran\\n");\n', (path) => {
    expect(readdirSync(dirname(path))).toEqual(["fixture.mjs"]);
    expect(execFileSync(process.execPath, [path], { encoding: "utf8" })).toBe("ran\n");
  });
});
