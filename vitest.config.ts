import { defineConfig } from "vitest/config";
import { SUITE_ENV } from "./test/helpers/cliEntry.js";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Files share their worker process (and its module cache) instead of each starting a fresh one: that
    // start and the re-import of the gateway's modules cost about a second per file. A file must leave no
    // state behind: restore fake timers, process.env and process listeners it changes.
    isolate: false,
    // Vitest's default on 2 cores is one worker; most files wait on sockets and child processes, so three
    // share the two cores well (measured on an idle 2-core machine: vitest 317 s with two, 288 s with three).
    maxWorkers: 3,
    env: { ...SUITE_ENV },
    reporters: ["default", "./test/helpers/summaryReporter.ts"],
  },
});
