import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, extname, join, resolve } from "node:path";
import { type BuildOptions, build, type Metafile, type Plugin } from "esbuild";
import { zodEnglishOnly } from "../../scripts/zodEnglishOnly.mjs";

const built = new Map<string, string>();

/** For an ES-module bundle that takes in a CommonJS package: its bundled require() of Node's built-ins. */
const REQUIRE_BANNER =
  "import { createRequire as __fixtureCreateRequire } from 'node:module'; const require = __fixtureCreateRequire(import.meta.url);";

/** A dynamic import in a bundle (or text that looks like one, which only keeps the bundle an ES module). */
const DYNAMIC_IMPORT = /\bimport\(/;

/** esbuild's warning for a bundle that reads `import.meta` (which its CommonJS output leaves empty). */
const IMPORT_META_WARNING = '"import.meta" is not available';

const LAUNCHER_FILE = join(import.meta.dirname, "codeCacheLauncher.mjs");
const LAUNCHER = readFileSync(LAUNCHER_FILE);

const BUNDLES = join(tmpdir(), "svc-test-fixture-bundles");

/** What a bundle is made from beside its inputs: this file, the launcher and the zod plugin's code. */
const BUILD_FILES = [
  import.meta.filename,
  LAUNCHER_FILE,
  join(import.meta.dirname, "../../scripts/zodEnglishOnly.mjs"),
];

export interface BundleOptions {
  /** esbuild plugins beside the one that drops zod's locales. */
  readonly plugins?: readonly Plugin[];
  /** Defines `require` in the bundle, for CommonJS packages it takes in (express and the like). */
  readonly commonJs?: boolean;
  /** The files the code of `plugins` is in: with them, the bundle is reused as one without plugins is. */
  readonly pluginFiles?: readonly string[];
}

/** The files of one bundled fixture, by name (the first is the one to start), and the files it was built from. */
interface BundleFiles {
  readonly files: readonly (readonly [name: string, contents: Uint8Array])[];
  readonly inputs: readonly string[];
}

/**
 * The fixture script `entry` (a server the tests start as a process of its own) bundled with everything it
 * imports, in a directory named by the bundle's hash under the system's temporary directory: bundles of
 * the same content are shared (by the workers, and by later runs), none is ever overwritten. The bundle runs
 * the same code (names kept, so nothing that reads a function's or class's name sees another); bundling costs
 * ~0.3 CPU-s, once per fixture while none of the files it is built from changes (see BuildRecord).
 *
 * A fixture that can be a CommonJS bundle (see commonJsFiles) is one, started through a launcher of the
 * entry's name (codeCacheLauncher.mjs) that runs it from V8's code cache kept beside it. Started with stdin
 * holding a handshake, a tools/list and a call, the stdio fixture took on the 2-core test machine (user +
 * system, mean of 20 interleaved runs) 0.26 CPU-s unbundled, 0.13 as an ES-module bundle, 0.10 from its cached
 * CommonJS bundle, and 0.15 for the first start, which compiles everything and writes the cache; files run
 * alone went from 8.3 to 7.5 CPU-s (mcp/lifecycle), 8.1 to 7.4 (mcp/stdio), 12.5 to 11.8 (mcp/cli). Any other
 * fixture stays an ES-module bundle of the entry's own name. A fixture that imports no package (such as
 * malformed-list-server) gains nothing from a bundle.
 */
export async function bundledFixture(entry: string, options: BundleOptions = {}): Promise<string> {
  const known = built.get(entry) ?? builtBefore(entry, options);
  if (known !== undefined) {
    built.set(entry, known);
    return known;
  }
  const { files, inputs } = (await commonJsFiles(entry, options)) ?? (await esModuleFiles(entry, options));
  const hash = createHash("sha256");
  for (const [name, contents] of files) hash.update(name).update(contents);
  const dir = join(BUNDLES, hash.digest("hex").slice(0, 16));
  mkdirSync(dir, { recursive: true });
  for (const [name, contents] of files) writeOnce(join(dir, name), contents);
  const path = join(dir, (files[0] as (typeof files)[0])[0]);
  built.set(entry, path);
  recordBuild(
    entry,
    options,
    path,
    files.map(([name]) => join(dir, name)),
    inputs,
  );
  return path;
}

/**
 * A record of the files one fixture's bundle was built from (the size and modification time of each) and
 * where that bundle is, beside the bundles: while none of those files changed, another worker (or a later
 * run) starts the same bundle without building it again (~0.25 CPU-s of esbuild per fixture and worker).
 * A fixture bundled with plugins of its caller's has a record only when the caller names the files of
 * their code (`pluginFiles`).
 */
interface BuildRecord {
  readonly path: string;
  /** Every file of the bundle (the one to start among them). */
  readonly bundle: readonly string[];
  readonly files: Readonly<Record<string, readonly [size: number, mtimeMs: number]>>;
}

function recordFile(entry: string, options: BundleOptions): string | undefined {
  if ((options.plugins ?? []).length > 0 && options.pluginFiles === undefined) return undefined;
  const key = createHash("sha256")
    .update(JSON.stringify([entry, options.commonJs === true, (options.plugins ?? []).map((p) => p.name)]))
    .digest("hex");
  return join(BUNDLES, `built-${key.slice(0, 16)}.json`);
}

function stamp(file: string): readonly [number, number] {
  const stat = statSync(file);
  return [stat.size, stat.mtimeMs];
}

/** The bundle a record names, when every file it was built from is as it was then; else undefined. */
function builtBefore(entry: string, options: BundleOptions): string | undefined {
  const file = recordFile(entry, options);
  if (file === undefined) return undefined;
  try {
    const record = JSON.parse(readFileSync(file, "utf8")) as BuildRecord;
    for (const [input, [size, mtimeMs]] of Object.entries(record.files)) {
      const [nowSize, nowMtimeMs] = stamp(input);
      if (nowSize !== size || nowMtimeMs !== mtimeMs) return undefined;
    }
    return record.bundle.every((path) => existsSync(path)) ? record.path : undefined;
  } catch {
    return undefined;
  }
}

function recordBuild(
  entry: string,
  options: BundleOptions,
  path: string,
  bundle: readonly string[],
  inputs: readonly string[],
): void {
  const file = recordFile(entry, options);
  if (file === undefined) return;
  const files: Record<string, readonly [number, number]> = {};
  try {
    for (const input of [...BUILD_FILES, ...(options.pluginFiles ?? []), ...inputs])
      files[input] = stamp(input);
  } catch {
    return; // An input that is no file of its own: this fixture is built by each worker, as before.
  }
  const partial = `${file}.${process.pid}.tmp`;
  writeFileSync(partial, JSON.stringify({ path, bundle, files } satisfies BuildRecord));
  renameSync(partial, file);
}

/**
 * The files on disk a build read, from its metafile (paths relative to the working directory); a module a
 * plugin made in a namespace of its own stands for the file of the same path.
 */
function inputFiles(metafile: Metafile): string[] {
  return Object.keys(metafile.inputs).map((input) => resolve(input.replace(/^[a-z-]+:/, "")));
}

/** Written whole under another name, then renamed: a worker never starts another's half-written file. */
function writeOnce(path: string, contents: Uint8Array): void {
  if (existsSync(path)) return;
  const partial = `${path}.${process.pid}.tmp`;
  writeFileSync(partial, contents);
  renameSync(partial, path);
}

function bundleOptions(
  entry: string,
  options: BundleOptions,
): BuildOptions & { write: false; metafile: true } {
  return {
    entryPoints: [entry],
    bundle: true,
    minify: true,
    keepNames: true,
    platform: "node",
    target: "node20",
    write: false,
    metafile: true,
    logLevel: "silent",
    // As in svc's own bundles: zod's locales but English are ~450 KB parsed at every start.
    plugins: [zodEnglishOnly, ...(options.plugins ?? [])],
  };
}

/**
 * The launcher and the CommonJS bundle it runs; undefined for a fixture that cannot be one: one that awaits
 * at its top level, reads `import.meta`, or calls import() (a compiled vm.Script has none of Node's: Node 20's
 * loader for it is experimental, warns on stderr, and is lost when the script comes from a code cache).
 */
async function commonJsFiles(entry: string, options: BundleOptions): Promise<BundleFiles | undefined> {
  const stem = basename(entry, extname(entry));
  try {
    const result = await build({ ...bundleOptions(entry, options), format: "cjs" });
    if (result.warnings.some((warning) => warning.text.includes(IMPORT_META_WARNING))) return undefined;
    const contents = (result.outputFiles[0] as { contents: Uint8Array }).contents;
    if (DYNAMIC_IMPORT.test(Buffer.from(contents).toString("latin1"))) return undefined;
    return {
      files: [
        [`${stem}.mjs`, LAUNCHER],
        [`${stem}.bundle.cjs`, contents],
      ],
      inputs: inputFiles(result.metafile),
    };
  } catch (err) {
    if (String(err).includes("Top-level await")) return undefined;
    throw err;
  }
}

async function esModuleFiles(entry: string, options: BundleOptions): Promise<BundleFiles> {
  const result = await build({
    ...bundleOptions(entry, options),
    format: "esm",
    logLevel: "warning",
    ...(options.commonJs === true ? { banner: { js: REQUIRE_BANNER } } : {}),
  });
  return {
    files: [[basename(entry), (result.outputFiles[0] as { contents: Uint8Array }).contents]],
    inputs: inputFiles(result.metafile),
  };
}
