// `npm run build`: three outputs in dist/.
// 1. Every module of src/ compiled on its own (dist/<same path>.js): what bench/ imports and profiles file by file.
// 2. The `svc` command bundled as ES modules (dist/cli/main.js, run.js, uwsThread.js and their shared chunks):
//    starting a command from ~340 module files cost twice the CPU of starting it from a bundle (gateway start 0.9 →
//    0.45 s, `svc config check` 0.42 → 0.27 s on the 2-core test machine). `svc gateway run` runs from it.
// 3. The same program as one CommonJS file, dist/cli/svc.cjs, which every other command runs from V8's code cache
//    (src/io/compileCache.ts: Node 20 caches no ES module's code). Not the gateway: in one file esbuild wraps
//    every lazily imported module in an initializer, and the accepted path ran ~5 % slower for it (p99 ~8 ms
//    worse at 32 connections).
// Packages that find files beside their own modules at run time (native addons, Lua scripts, the xdg-open
// script) stay external. pino is bundled: its ~30 CommonJS files cost each command ~15 ms of CPU to resolve
// and load from node_modules, and svc uses none of its worker-thread transports, the one part of it that
// finds a file (lib/worker.js) beside its modules.
import { chmodSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { build } from "esbuild";
import { rxjsModules } from "./rxjsModules.mjs";
import { zodEnglishOnly } from "./zodEnglishOnly.mjs";

const common = { platform: "node", target: "node20", sourcemap: true, logLevel: "warning" };
const esm = { ...common, format: "esm" };
const bundled = {
  bundle: true,
  plugins: [zodEnglishOnly, rxjsModules],
  external: ["uWebSockets.js", "bullmq", "ioredis", "open", "ws", "@statelyai/inspect", "undici"],
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
  // Strict, as the ES modules it is made of are: a statement before esbuild's own "use strict" would leave the
  // whole program in sloppy mode, with other semantics than the modules were written for.
  banner: { js: "\"use strict\";\nconst __svcImportMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
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

await build({
  ...esm,
  ...bundled,
  // The worker threads are started from `new URL("./uwsThread.js", import.meta.url)` (and `./indexWorker.js`,
  // the session index's thread), so they sit beside the chunks.
  entryPoints: {
    main: "src/cli/main.ts",
    run: "src/cli/run.ts",
    // What main.js runs, for the tests' one-process runner (test/helpers/cliRunner.mjs): the same code as
    // main.js's (a chunk both import), so the runner starts each command as a user's `svc` does.
    runCli: "src/cli/runCli.ts",
    uwsThread: "src/io/http/uwsThread.ts",
    indexWorker: "src/io/sessions/indexWorker.ts",
  },
  outdir: "dist/cli",
  splitting: true,
  allowOverwrite: true,
  banner: { js: requireBanner },
});

chmodSync("dist/cli/main.js", 0o755);
