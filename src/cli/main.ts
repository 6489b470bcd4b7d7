#!/usr/bin/env node
import { fileURLToPath } from "node:url";
import { loadBundle } from "../io/compileCache.js";
import { quietWhenOutputCloses } from "./closedOutput.js";
import { holdStopSignals } from "./earlySignals.js";
import { boundHeapGrowth } from "./gatewayHeap.js";

// Before the rest of the program loads: a signal that comes while it loads is held, not fatal. The
// foreground gateway gives up a closed stdout itself (src/cli/gateway.ts); every other command drops what a
// reader that went away no longer reads. The gateway's heap flag is set before the program is compiled as
// well: V8 reads a code cache only under the flags it was made with, and the gateway sets it anyway.
if (process.argv[2] === "gateway" && process.argv[3] === "run") {
  holdStopSignals();
  boundHeapGrowth();
} else for (const stream of [process.stdout, process.stderr]) quietWhenOutputCloses(stream);

// Built, the program is the bundle beside this script, run from V8's code cache (src/io/compileCache.ts);
// from source (tsx), its own modules.
const { main } = import.meta.url.endsWith(".ts")
  ? await import("./run.js")
  : (loadBundle(fileURLToPath(new URL("./svc.cjs", import.meta.url))).exports as typeof import("./run.js"));

await main();
