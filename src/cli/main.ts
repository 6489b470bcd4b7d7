#!/usr/bin/env node
import { holdStopSignals } from "./earlySignals.js";
import { main } from "./run.js";

export { main };

if (process.argv[2] === "gateway" && process.argv[3] === "run") holdStopSignals();
await main();
