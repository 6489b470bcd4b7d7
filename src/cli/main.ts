#!/usr/bin/env node
import { quietWhenOutputCloses } from "./closedOutput.js";
import { holdStopSignals } from "./earlySignals.js";

// Before the rest of the program loads (a dynamic import, so it is not evaluated first): a signal that
// comes while it loads is held, not fatal. The foreground gateway gives up a closed stdout itself
// (src/cli/gateway.ts); every other command drops what a reader that went away no longer reads.
if (process.argv[2] === "gateway" && process.argv[3] === "run") holdStopSignals();
else for (const stream of [process.stdout, process.stderr]) quietWhenOutputCloses(stream);
const { main } = await import("./run.js");

export { main };

await main();
