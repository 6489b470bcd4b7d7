/**
 * Runs a CommonJS bundle with V8's code cache. Node 20 compiles every function of the program again at
 * each start (Node 22's `module.enableCompileCache` is what this does there): the built `svc` spent about a
 * fifth to a quarter of a command's start-up CPU on it. The cache of a command (`webhook list`, `mcp call`: the first
 * two words of its command line) is written when the first process that ran it without one exits, and holds
 * the code of every function that process compiled; later processes of the same command start from it.
 *
 * It lives beside the bundle (`compile-cache/`, which a rebuild removes with the rest of `dist/`). A file
 * names the bundle's size and modification time, since V8 itself checks only the source's length (and its
 * own version and flags): a cache of another build is never read, and is removed when its command writes
 * its new one. A process that exits with a usage error (2) writes none. Where that directory cannot be written
 * (an install owned by another user) nothing is cached and nothing is said. `SVC_NO_COMPILE_CACHE=1` turns it off.
 */
import { isAscii } from "node:buffer";
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import Module, { createRequire } from "node:module";
import { dirname, join } from "node:path";
import vm from "node:vm";
import { lendImport } from "./importExternal.js";
import { writeFileAtomic } from "./stores/atomicFile.js";

/** What became of the cache when the bundle loaded. */
export type CacheUse =
  /** Read and accepted by V8. */
  | "used"
  /** None yet (or V8 refused the one there): written when the process exits. */
  | "will-write"
  /** Not cached: turned off, or a directory that cannot be written or is full. */
  | "off";

export interface LoadedBundle {
  readonly exports: unknown;
  readonly cache: CacheUse;
}

/** More files than any set of commands makes: a directory at this size takes no new one. */
const MAX_FILES = 64;
const WORD = /^[a-z][a-z0-9-]{0,23}$/;
/** svc's exit code for a usage error. */
const USAGE_ERROR = 2;

/** The cache's name for a command line (`process.argv`): its first two words, or `none`. */
export function commandKey(argv: readonly string[]): string {
  const words: string[] = [];
  for (const arg of argv.slice(2, 4)) {
    if (!WORD.test(arg)) break;
    words.push(arg);
  }
  return words.length === 0 ? "none" : words.join("-");
}

/** What a cache file's name starts with: the command, then the bundle's build (its size and time). */
export function cacheFilePrefix(key: string, bundle: { size: number; mtimeMs: number }): string {
  return `${key}.${bundle.size}-${Math.trunc(bundle.mtimeMs)}-`;
}

/** The cache file's name: the prefix, then what V8 it is valid for (its version and Node's flags). */
export function cacheFileName(prefix: string, v8: string): string {
  return `${prefix}v8-${v8}.bin`;
}

function readIfThere(path: string): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch {
    return undefined;
  }
}

/**
 * The bundle's text. svc's is ASCII (its build escapes the rest), which is read as Latin-1: a copy of the bytes
 * into a one-byte string, where decoding its 5 MB as UTF-8 cost ~15 ms of every start.
 */
function sourceText(bytes: Buffer): string {
  return isAscii(bytes) ? bytes.toString("latin1") : bytes.toString("utf8");
}

/** The cache directory beside the bundle, made if missing; undefined when it cannot be used. */
function cacheDirectory(bundle: string): string | undefined {
  const dir = join(dirname(bundle), "compile-cache");
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return readdirSync(dir).length < MAX_FILES ? dir : undefined;
  } catch {
    return undefined;
  }
}

/** Writes the cache of what the process compiled, and removes the command's caches of other builds. */
function writeCache(dir: string, name: string, key: string, prefix: string, script: vm.Script): void {
  try {
    writeFileAtomic(join(dir, name), script.createCachedData());
    for (const other of readdirSync(dir))
      if (other.startsWith(`${key}.`) && !other.startsWith(prefix) && other.endsWith(".bin"))
        rmSync(join(dir, other), { force: true });
  } catch {
    // A cache is only ever a shortcut: a full disk or a directory made read-only since costs the next start time.
  }
}

/**
 * The V8 version and the flags Node was started with: V8 refuses a cache made under other flags, so a
 * command run under other flags (`node --max-old-space-size=… svc …`, NODE_OPTIONS) keeps a cache of its own
 * instead of replacing the usual one at every start.
 */
function v8Fingerprint(): string {
  const flags = [...process.execArgv, process.env.NODE_OPTIONS ?? ""].join(" ");
  return `${process.versions.v8}-${createHash("sha256").update(flags).digest("hex").slice(0, 8)}`;
}

/**
 * Loads the CommonJS bundle `file` (its `module.exports`) for the command `argv`, from the command's code
 * cache when there is one; with the cache off, the bundle is simply required. The bundle calls no
 * `import()` of its own (src/io/importExternal.ts): a compiled script has none without an experimental hook.
 */
export function loadBundle(file: string, argv: readonly string[] = process.argv): LoadedBundle {
  const require = createRequire(file);
  const dir = process.env.SVC_NO_COMPILE_CACHE === "1" ? undefined : cacheDirectory(file);
  if (dir === undefined) return { exports: require(file), cache: "off" };
  const key = commandKey(argv);
  const prefix = cacheFilePrefix(key, statSync(file));
  const name = cacheFileName(prefix, v8Fingerprint());
  const cached = readIfThere(join(dir, name));
  const script = new vm.Script(Module.wrap(sourceText(readFileSync(file))), {
    filename: file,
    cachedData: cached,
  });
  const used = cached !== undefined && !script.cachedDataRejected;
  // A command line refused as a usage error (exit 2: an unknown command or option, a typo such as
  // `svc gateway stauts`) is no command: a cache of its words would only fill the directory towards MAX_FILES.
  if (!used)
    process.once("exit", (code) => {
      if (code !== USAGE_ERROR) writeCache(dir, name, key, prefix, script);
    });
  // The program's import() of packages outside it is this module's own (src/io/importExternal.ts).
  lendImport((specifier) => import(specifier));
  const module = new Module(file);
  module.filename = file;
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
  wrapper.call(module.exports, module.exports, require, module, file, dirname(file));
  module.loaded = true;
  return { exports: module.exports, cache: used ? "used" : "will-write" };
}
