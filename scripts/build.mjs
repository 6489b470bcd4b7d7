// `npm run build`: two outputs in dist/.
// 1. Every module of src/ compiled on its own (dist/<same path>.js): what bench/ imports and profiles file by file.
// 2. The `svc` command bundled (dist/cli/main.js, run.js, uwsThread.js and their shared chunks): starting a command
//    from ~340 module files cost twice the CPU of starting it from a bundle (gateway start 0.9 → 0.45 s, `svc
//    config check` 0.42 → 0.27 s on the 2-core test machine). Packages that find files beside their own modules
//    at run time (native addons, Lua scripts, worker-thread transports, the xdg-open script) stay external.
import { chmodSync, rmSync } from "node:fs";
import { build } from "esbuild";
import { rxjsModules } from "./rxjsModules.mjs";
import { zodEnglishOnly } from "./zodEnglishOnly.mjs";

const common = { format: "esm", platform: "node", target: "node20", sourcemap: true, logLevel: "warning" };

rmSync("dist", { recursive: true, force: true });

await build({ ...common, entryPoints: ["src/**/*.ts"], outdir: "dist", outbase: "src" });

await build({
  ...common,
  // The worker thread is started from `new URL("./uwsThread.js", import.meta.url)`, so it sits beside the chunks.
  entryPoints: { main: "src/cli/main.ts", run: "src/cli/run.ts", uwsThread: "src/io/http/uwsThread.ts" },
  outdir: "dist/cli",
  bundle: true,
  splitting: true,
  allowOverwrite: true,
  plugins: [zodEnglishOnly, rxjsModules],
  external: ["uWebSockets.js", "pino", "bullmq", "ioredis", "open", "ws", "@statelyai/inspect", "undici"],
  // Bundled CommonJS packages call require() for externals and Node built-ins.
  banner: {
    js: "import { createRequire as __svcCreateRequire } from 'node:module'; const require = __svcCreateRequire(import.meta.url);",
  },
});

chmodSync("dist/cli/main.js", 0o755);
