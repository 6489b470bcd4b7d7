// Runs a fixture's CommonJS bundle (NAME.bundle.cjs beside this copy of the launcher, NAME.mjs) from V8's
// code cache (NAME.v8-VERSION.cache), as src/io/compileCache.ts runs svc: Node 20 keeps no code cache for
// ES modules. The first process that ran without a usable cache and exits cleanly writes one, whole under
// another name and then renamed, so that a process racing it reads the old cache, none, or the new one.
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import Module, { createRequire } from "node:module";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import vm from "node:vm";

const launcher = fileURLToPath(import.meta.url);
const bundle = launcher.replace(/\.mjs$/, ".bundle.cjs");
const cacheFile = launcher.replace(/\.mjs$/, `.v8-${process.versions.v8}.cache`);

function readCache() {
  try {
    return readFileSync(cacheFile);
  } catch {
    return undefined;
  }
}

function writeCache(script) {
  const partial = `${cacheFile}.${process.pid}.tmp`;
  try {
    writeFileSync(partial, script.createCachedData());
    renameSync(partial, cacheFile);
  } catch {
    // A cache is only a shortcut: the next start compiles the bundle again and tries again.
  }
}

const cachedData = readCache();
// The bundle is ASCII (esbuild escapes the rest): read as Latin-1, a copy of the bytes, not a UTF-8 decode.
const script = new vm.Script(Module.wrap(readFileSync(bundle, "latin1")), { filename: bundle, cachedData });
// A rejected cache (another V8's flags) is rewritten. Only a clean exit writes: a process that crashed
// early would leave a cache of its start-up alone, and a cache once accepted is never rewritten.
if (cachedData === undefined || script.cachedDataRejected)
  process.once("exit", (code) => {
    if (code === 0) writeCache(script);
  });
const bundleModule = new Module(bundle);
bundleModule.filename = bundle;
const wrapper = script.runInThisContext();
wrapper.call(
  bundleModule.exports,
  bundleModule.exports,
  createRequire(bundle),
  bundleModule,
  bundle,
  dirname(bundle),
);
bundleModule.loaded = true;
