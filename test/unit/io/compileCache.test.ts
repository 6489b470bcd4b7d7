import { execFile } from "node:child_process";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cacheFileName, cacheFilePrefix, commandKey } from "../../../src/io/compileCache.js";
import { CLI_NODE_ARGS, svcModule } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

const execFileAsync = promisify(execFile);

describe("the cache's names", () => {
  it("a command is named by its first two words; options, values and odd words end the name", () => {
    const key = (...args: string[]) => commandKey(["node", "svc", ...args]);
    expect(key("gateway", "run", "--port", "0")).toBe("gateway-run");
    expect(key("mcp", "call", "fx", "echo")).toBe("mcp-call");
    expect(key("webhook", "--json")).toBe("webhook");
    expect(key("--version")).toBe("none");
    expect(key()).toBe("none");
    expect(key("../../etc", "x")).toBe("none");
    expect(key("Gateway", "run")).toBe("none");
    expect(key("a".repeat(30))).toBe("none");
  });

  it("a file names the bundle's size and time and what V8 it is for", () => {
    const prefix = cacheFilePrefix("webhook-list", { size: 5309441, mtimeMs: 1700000000123.7 });
    expect(cacheFileName(prefix, "11.3-abcd")).toBe("webhook-list.5309441-1700000000123-v8-11.3-abcd.bin");
  });
});

/**
 * A bundle in a temporary directory, loaded by a process of its own (the cache is written as it exits), which
 * prints how the cache was used and what the bundle computed.
 */
describe("a bundle run from its code cache", () => {
  let home: TempHome;
  let bundle: string;
  let loader: string;
  const cacheDir = () => join(home.dir, "compile-cache");
  const cacheFiles = () => readdirSync(cacheDir()).sort();

  beforeEach(() => {
    home = tempHome();
    bundle = home.write(
      "program.cjs",
      "exports.answer = () => [1, 2, 3].map((n) => n * 2).reduce((a, b) => a + b, 0);\n",
    );
    loader = home.write(
      "load.mjs",
      `const { loadBundle } = await import(${JSON.stringify(pathToFileURL(svcModule("io/compileCache.js")).href)});
const [bundle, ...words] = process.argv.slice(2);
const loaded = loadBundle(bundle, ["node", "svc", ...words]);
process.stdout.write(JSON.stringify({ cache: loaded.cache, answer: loaded.exports.answer() }));
if (process.env.LOAD_EXIT_CODE) process.exit(Number(process.env.LOAD_EXIT_CODE));`,
    );
  });
  afterEach(() => home.cleanup());

  const load = async (
    words: string[] = ["webhook", "list"],
    env: Record<string, string> = {},
    nodeArgs: string[] = [],
  ) => {
    const { stdout } = await execFileAsync(
      process.execPath,
      [...nodeArgs, ...CLI_NODE_ARGS, loader, bundle, ...words],
      { env: { ...process.env, ...env } },
    );
    return JSON.parse(stdout) as { cache: string; answer: number | string };
  };

  it("the first process writes its command's cache as it exits (0600, in a 0700 directory); the next starts from it and writes nothing", async () => {
    expect(await load()).toEqual({ cache: "will-write", answer: 12 });
    const [file] = cacheFiles();
    expect(cacheFiles()).toHaveLength(1);
    expect(file).toMatch(/^webhook-list\.\d+-\d+-v8-.+\.bin$/);
    const path = join(cacheDir(), file as string);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(cacheDir()).mode & 0o777).toBe(0o700);
    const written = statSync(path);
    expect(await load()).toEqual({ cache: "used", answer: 12 });
    expect(statSync(path).mtimeMs).toBe(written.mtimeMs);
    expect(statSync(path).ino).toBe(written.ino);
  });

  it("a command line refused as a usage error (exit 2: an unknown command or option, `svc gateway stauts`) writes no cache; one ending with another code does", async () => {
    const exiting = (words: string[], code: number) =>
      execFileAsync(process.execPath, [...CLI_NODE_ARGS, loader, bundle, ...words], {
        env: { ...process.env, LOAD_EXIT_CODE: String(code) },
      }).catch((err: { code?: number; stdout?: string }) => err);
    expect(await exiting(["gateway", "stauts"], 2)).toMatchObject({ code: 2 });
    expect(readdirSync(cacheDir())).toEqual([]);
    expect(await exiting(["gateway", "status"], 3)).toMatchObject({ code: 3 });
    expect(cacheFiles().map((f) => f.split(".")[0])).toEqual(["gateway-status"]);
  });

  it("each command keeps its own cache", async () => {
    await load(["webhook", "list"]);
    await load(["gateway", "run"]);
    expect(cacheFiles().map((f) => f.split(".")[0])).toEqual(["gateway-run", "webhook-list"]);
    expect((await load(["gateway", "run"])).cache).toBe("used");
  });

  it("a process started with other V8 flags keeps a cache of its own (V8 refuses one made under other flags)", async () => {
    await load();
    expect((await load(["webhook", "list"], {}, ["--max-semi-space-size=8"])).cache).toBe("will-write");
    expect(cacheFiles()).toHaveLength(2);
    expect((await load(["webhook", "list"], {}, ["--max-semi-space-size=8"])).cache).toBe("used");
    expect((await load()).cache).toBe("used");
  });

  it("a cache V8 refuses (damaged) is not used: the bundle runs and the cache is written again", async () => {
    await load();
    const path = join(cacheDir(), cacheFiles()[0] as string);
    writeFileSync(path, Buffer.alloc(4096, 7));
    expect(await load()).toEqual({ cache: "will-write", answer: 12 });
    expect(readFileSync(path).equals(Buffer.alloc(4096, 7))).toBe(false);
    expect((await load()).cache).toBe("used");
  });

  it("a rebuilt bundle gets a cache of its own, which replaces the old build's (under any flags)", async () => {
    await load();
    await load(["webhook", "list"], {}, ["--max-semi-space-size=8"]);
    await load(["gateway", "run"]);
    const old = cacheFiles().filter((f) => f.startsWith("webhook-list."));
    writeFileSync(bundle, "exports.answer = () => 7; // rebuilt, longer\n");
    expect(await load()).toEqual({ cache: "will-write", answer: 7 });
    const now = cacheFiles().filter((f) => f.startsWith("webhook-list."));
    expect(now).toHaveLength(1);
    expect(old).not.toContain(now[0]);
    // Another command's cache of the old build goes when that command writes its own.
    expect(cacheFiles().filter((f) => f.startsWith("gateway-run."))).toHaveLength(1);
    expect(await load()).toEqual({ cache: "used", answer: 7 });
  });

  it("a bundle that is not ASCII is read as UTF-8, from its cache too", async () => {
    writeFileSync(bundle, 'exports.answer = () => "café — ✓ 👍";\n');
    expect(await load()).toEqual({ cache: "will-write", answer: "café — ✓ 👍" });
    expect(await load()).toEqual({ cache: "used", answer: "café — ✓ 👍" });
  });

  it("processes of one command writing at once leave one whole cache", async () => {
    const runs = await Promise.all([load(), load(), load(), load()]);
    expect(runs.every((run) => run.answer === 12)).toBe(true);
    expect(cacheFiles()).toHaveLength(1);
    expect((await load()).cache).toBe("used");
  });

  it("where the directory cannot be made, and with SVC_NO_COMPILE_CACHE=1, the bundle runs without a cache", async () => {
    expect(await load(["webhook", "list"], { SVC_NO_COMPILE_CACHE: "1" })).toEqual({
      cache: "off",
      answer: 12,
    });
    expect(readdirSync(home.dir)).not.toContain("compile-cache");
    home.write("compile-cache", "a file where the directory would go");
    expect(await load()).toEqual({ cache: "off", answer: 12 });
  });
});
