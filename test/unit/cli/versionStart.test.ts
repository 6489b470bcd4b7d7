import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { CLI_MAIN, CLI_NODE_ARGS } from "../../helpers/cliEntry.js";
import { tempHome } from "../../helpers/home.js";

/**
 * `svc --version` (and `-V`) answers from the entry script, without loading the program: neither its CommonJS
 * bundle (dist/cli/svc.cjs, required as such with the code cache off) nor run.js (what the source and the
 * gateway import). A preload records both: every module URL resolved, and the CommonJS modules loaded at exit.
 */
const home = tempHome();
afterAll(() => home.cleanup());
const log = join(home.dir, "loaded.txt");
home.write(
  "hook.mjs",
  `import { appendFileSync } from "node:fs";
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(${JSON.stringify(log)}, resolved.url + "\\n");
  return resolved;
}`,
);
home.write(
  "preload.mjs",
  `import { appendFileSync } from "node:fs";
import { createRequire, register } from "node:module";
register(${JSON.stringify(pathToFileURL(join(home.dir, "hook.mjs")).href)});
const require = createRequire(import.meta.url);
process.on("exit", () => appendFileSync(${JSON.stringify(log)}, Object.keys(require.cache).join("\\n") + "\\n"));`,
);
const pkg = JSON.parse(readFileSync(join(dirname(CLI_MAIN), "../../package.json"), "utf8")) as {
  version: string;
};

async function version(flag: string): Promise<{ stdout: string; loaded: string[] }> {
  home.write("loaded.txt", "");
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [...CLI_NODE_ARGS, "--import", join(home.dir, "preload.mjs"), CLI_MAIN, flag],
    { env: { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir, SVC_NO_COMPILE_CACHE: "1" } },
  );
  return { stdout, loaded: readFileSync(log, "utf8").split("\n").filter(Boolean) };
}

describe("svc --version", () => {
  it.each(["--version", "-V"])(
    "%s prints the version without loading the program",
    async (flag) => {
      const { stdout, loaded } = await version(flag);
      expect(stdout).toBe(`${pkg.version}\n`);
      expect(loaded.filter((path) => /\/cli\/(run\.(js|ts)|svc\.cjs)$/.test(path))).toEqual([]);
    },
    30_000,
  );

  it("the same preload sees the program where a command loads it", async () => {
    const { stdout, loaded } = await version("--help");
    expect(stdout).toContain("Usage: svc");
    expect(loaded.some((path) => /\/cli\/(run\.(js|ts)|svc\.cjs)$/.test(path))).toBe(true);
  }, 30_000);
});
