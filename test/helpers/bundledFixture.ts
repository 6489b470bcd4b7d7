import { createHash } from "node:crypto";
import { existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { build, type Plugin } from "esbuild";
import { zodEnglishOnly } from "../../scripts/zodEnglishOnly.mjs";

const built = new Map<string, string>();

/** For a fixture that is a CommonJS package's program: its bundled require() of Node's built-ins. */
const REQUIRE_BANNER =
  "import { createRequire as __fixtureCreateRequire } from 'node:module'; const require = __fixtureCreateRequire(import.meta.url);";

export interface BundleOptions {
  /** esbuild plugins beside the one that drops zod's locales. */
  readonly plugins?: readonly Plugin[];
  /** Defines `require` in the bundle, for CommonJS packages it takes in (express and the like). */
  readonly commonJs?: boolean;
}

/**
 * The fixture script `entry` (a server the tests start as a process of its own) bundled with everything it
 * imports into one file of the same name, in a directory named by the bundle's hash under the system's
 * temporary directory: bundles of the same content are shared (by the workers, and by later runs), none is
 * ever overwritten. Node starts a fixture that imports the MCP SDK and zod from ~240 module files in ~0.6
 * CPU-s on the 2-core test machine, from its bundle in ~0.4; the suite starts the MCP stdio fixture about
 * a hundred times. The bundle runs the same code (names kept, so nothing that reads a function's or
 * class's name sees another); bundling costs ~0.3 CPU-s, once per worker process.
 */
export async function bundledFixture(entry: string, options: BundleOptions = {}): Promise<string> {
  const known = built.get(entry);
  if (known !== undefined) return known;
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    minify: true,
    keepNames: true,
    platform: "node",
    format: "esm",
    target: "node20",
    write: false,
    logLevel: "warning",
    // As in svc's own bundles: zod's locales but English are ~450 KB parsed at every start.
    plugins: [zodEnglishOnly, ...(options.plugins ?? [])],
    ...(options.commonJs === true ? { banner: { js: REQUIRE_BANNER } } : {}),
  });
  const contents = (result.outputFiles[0] as { contents: Uint8Array }).contents;
  const hash = createHash("sha256").update(contents).digest("hex").slice(0, 16);
  const dir = join(tmpdir(), "svc-test-fixture-bundles", hash);
  const path = join(dir, basename(entry));
  if (!existsSync(path)) {
    mkdirSync(dir, { recursive: true });
    // Written whole under another name, then renamed: a worker never starts another's half-written bundle.
    const partial = `${path}.${process.pid}.tmp`;
    writeFileSync(partial, contents);
    renameSync(partial, path);
  }
  built.set(entry, path);
  return path;
}
