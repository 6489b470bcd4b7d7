// `npm run build`: two outputs in dist/.
// 1. Every module of src/ compiled on its own (dist/<same path>.js): what bench/ imports and profiles file by file.
// 2. The `svc` command bundled: starting a command from ~340 module files cost twice the CPU of starting it from a
//    bundle (gateway start 0.9 → 0.45 s, `svc config check` 0.42 → 0.27 s on the 2-core test machine). The program
//    is one CommonJS file, dist/cli/svc.cjs, so that it can run from V8's code cache (src/io/compileCache.ts: Node
//    20 caches no ES module's code); dist/cli/main.js, the `svc` command itself, holds stop signals and loads it;
//    dist/cli/uwsThread.js is the ingress worker thread. Packages that find files beside their own modules at run
//    time (native addons, Lua scripts, worker-thread transports, the xdg-open script) stay external.
import { chmodSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { build } from "esbuild";
import { rxjsModules } from "./rxjsModules.mjs";
import { zodEnglishOnly } from "./zodEnglishOnly.mjs";

const common = { platform: "node", target: "node20", sourcemap: true, logLevel: "warning" };
const esm = { ...common, format: "esm" };
const bundled = {
  bundle: true,
  plugins: [zodEnglishOnly, rxjsModules],
  external: ["uWebSockets.js", "pino", "bullmq", "ioredis", "open", "ws", "@statelyai/inspect", "undici"],
};
// Bundled CommonJS packages call require() for externals and Node built-ins.
const requireBanner =
  "import { createRequire as __svcCreateRequire } from 'node:module'; const require = __svcCreateRequire(import.meta.url);";

rmSync("dist", { recursive: true, force: true });

await build({ ...esm, entryPoints: ["src/**/*.ts"], outdir: "dist", outbase: "src" });

await build({
  ...common,
  ...bundled,
  format: "cjs",
  entryPoints: ["src/cli/run.ts"],
  outfile: "dist/cli/svc.cjs",
  // import.meta.url names the bundle, as it named each module (package.json, the worker thread's script and
  // packages are found from it).
  define: { "import.meta.url": "__svcImportMetaUrl" },
  banner: { js: "const __svcImportMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
});

// esbuild escapes every other character in the code, not in the comments it keeps: the same escapes there
// make the file ASCII, which the program's loader reads without decoding (src/io/compileCache.ts).
const program = readFileSync("dist/cli/svc.cjs", "utf8");
// A line separator ends a comment: escaped, it would comment out what follows it.
if (/[\u2028\u2029]/.test(program)) throw new Error("dist/cli/svc.cjs holds a line separator (U+2028/U+2029)");
writeFileSync(
  "dist/cli/svc.cjs",
  program.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`),
);

// The worker thread is started from `new URL("./uwsThread.js", import.meta.url)`, so it sits beside the program.
await build({ ...esm, ...bundled, entryPoints: ["src/io/http/uwsThread.ts"], outdir: "dist/cli", banner: { js: requireBanner } });

// The entry loads the program (`./run.js` only when it runs from source, under tsx).
const programFromSource = {
  name: "program-from-source",
  setup(build) {
    build.onResolve({ filter: /^\.\/run\.js$/ }, () => ({ path: "./run.js", external: true }));
  },
};
await build({ ...esm, ...bundled, plugins: [programFromSource], entryPoints: ["src/cli/main.ts"], outdir: "dist/cli" });

chmodSync("dist/cli/main.js", 0o755);
