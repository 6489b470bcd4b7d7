import { isAscii } from "node:buffer";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CLI_MAIN } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { type Foreground, killIfRunning, runForeground, svcProcess } from "./svc.js";

/** The built command's code caches (src/io/compileCache.ts); none when the suite runs svc from source. */
const CACHE_DIR = join(dirname(CLI_MAIN), "compile-cache");
const BUILT = CLI_MAIN.endsWith(".js");

/** The modification time of each of a command's caches. */
const cachesOf = (key: string) =>
  existsSync(CACHE_DIR)
    ? readdirSync(CACHE_DIR)
        .filter((name) => name.startsWith(`${key}.`) && name.endsWith(".bin"))
        .map((name) => [name, statSync(join(CACHE_DIR, name)).mtimeMs] as const)
    : [];

let home: TempHome;
let gateway: Foreground | undefined;
beforeEach(() => {
  home = tempHome();
});
afterEach(async () => {
  await killIfRunning(gateway);
  gateway = undefined;
  home.cleanup();
});

describe.skipIf(!BUILT)("the built svc starts from its code cache", () => {
  it("a command's second run reads the cache its first wrote, and answers the same", async () => {
    const first = await svcProcess(home, ["webhook", "list"]);
    expect(first.code).toBe(0);
    const written = cachesOf("webhook-list");
    expect(written.length).toBeGreaterThan(0);
    const again = await svcProcess(home, ["webhook", "list"]);
    expect(again).toEqual({ code: 0, stdout: first.stdout, stderr: "" });
    expect(cachesOf("webhook-list")).toEqual(written);
  });

  it("the program is ASCII, which its loader reads without decoding", () => {
    expect(isAscii(readFileSync(join(dirname(CLI_MAIN), "svc.cjs")))).toBe(true);
  });

  it("the gateway runs from the ES-module build, not from a cache (its request path is faster there), with nothing on stderr", async () => {
    gateway = await runForeground(home);
    gateway.child.kill("SIGTERM");
    expect(await gateway.exited).toBe(0);
    expect(gateway.stderr()).toBe("");
    expect(cachesOf("gateway-run")).toEqual([]);
  });
});
