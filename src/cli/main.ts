#!/usr/bin/env node
import { holdStopSignals } from "./earlySignals.js";

// Before the rest of the program loads (a dynamic import, so it is not evaluated first): a signal that
// comes while it loads is held, not fatal.
if (process.argv[2] === "gateway" && process.argv[3] === "run") holdStopSignals();
const { main } = await import("./run.js");

export { main };

await main();
