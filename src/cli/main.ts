#!/usr/bin/env node
import { runCli } from "./runCli.js";

// The command line as `svc` runs it (src/cli/runCli.ts, which the tests' one-process runner calls as well).
await runCli();
