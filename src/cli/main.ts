#!/usr/bin/env node
import { fileURLToPath } from "node:url";
import { loadBundle } from "../io/compileCache.js";
import { gatewayOpenFilesProblem, openFileLimit } from "../io/openFileLimit.js";
import { quietWhenOutputCloses } from "./closedOutput.js";
import { holdStopSignals } from "./earlySignals.js";

// Before the rest of the program loads: a signal that comes while it loads is held, not fatal. The
// foreground gateway gives up a closed stdout itself (src/cli/gateway.ts); every other command drops what a
// reader that went away no longer reads.
const gatewayRun = process.argv[2] === "gateway" && process.argv[3] === "run";
if (gatewayRun) {
  // Before the program's modules load: under too low a limit on open files their loading fails first.
  const openFiles = gatewayOpenFilesProblem(openFileLimit());
  if (openFiles !== undefined) {
    process.stderr.write(`svc: ${openFiles}\n`);
    process.exit(1);
  }
  holdStopSignals();
} else {
  quietWhenOutputCloses(process.stdout, "stdout");
  quietWhenOutputCloses(process.stderr, "stderr");
}

// `svc --version` alone is answered here, as the program's parser answers it (the version and a newline, exit
// 0), without loading the program: its CPU time went from 0.10 s to 0.07 s (node alone: 0.05 s).
const versionOnly =
  process.argv.length === 3 && (process.argv[2] === "--version" || process.argv[2] === "-V");
if (versionOnly) process.stdout.write(`${(await import("../io/version.js")).VERSION}\n`);
else {
  // Built, every command but the gateway runs from the program's CommonJS bundle beside this script, compiled
  // from V8's code cache (src/io/compileCache.ts); `gateway run`, whose request path runs faster as ES modules,
  // and the source (tsx) import run.js.
  const { main } =
    gatewayRun || import.meta.url.endsWith(".ts")
      ? await import("./run.js")
      : (loadBundle(fileURLToPath(new URL("./svc.cjs", import.meta.url)))
          .exports as typeof import("./run.js"));
  await main();
}
