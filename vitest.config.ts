import { defineConfig } from "vitest/config";
import { SUITE_ENV } from "./test/helpers/cliEntry.js";
import DurationSequencer from "./test/helpers/durationSequencer.js";
import { python3 } from "./test/helpers/python.js";

/**
 * python3's own path, found here once rather than by each worker (test/helpers/python.ts); a machine without
 * python3 leaves it to the files that need it to say so.
 */
function python3Env(): Record<string, string> {
  try {
    return { SVC_TEST_PYTHON3: python3() };
  } catch {
    return {};
  }
}

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
    // Vitest's default on 2 cores is one worker; most files wait on sockets, timers and child processes, so
    // six share the two cores well (fresh-clone `npm test` on the 2-core machine, 2026-12-03: 205-232 s with
    // four workers, 186-188 s with six, 188-194 s with eight; earlier, 258 s with three against 210 s with four).
    maxWorkers: 6,
    env: { ...SUITE_ENV, ...python3Env() },
    setupFiles: ["./test/helpers/removeLeftHomes.ts"],
    // Longest file first, from the committed durations where this clone has no record of its own.
    sequence: { sequencer: DurationSequencer },
    reporters: ["default", "./test/helpers/summaryReporter.ts"],
  },
});
