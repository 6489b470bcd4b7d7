import { accessSync, constants, statfsSync } from "node:fs";
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

/** statfs's type of a tmpfs (linux/magic.h TMPFS_MAGIC). */
const TMPFS_MAGIC = 0x01021994;
/** Room a tmpfs needs to hold the suite's homes (its largest file writes a record past 256 MiB). */
const TMPFS_ROOM = 4 * 1024 ** 3;

/**
 * The tests' temporary directory (`os.tmpdir()`, where every SVC_HOME, Redis and fixture bundle of the suite
 * is made): the machine's tmpfs `/dev/shm` where it has one with room, unless TMPDIR is set. On this VM's disk
 * (ext4 mounted with `discard`) each of the suite's thousands of gateway starts and stops spent ~25-50 ms
 * blocked in fsync, mkdir, rmdir and unlink of its home, and ~10 ms of CPU (an in-process start, a request
 * and a stop, 40 of them: 64-76 -> 24-41 ms wall per cycle; every 15th test file, 60 files, six workers:
 * 59.7 and 61.4 -> 58.5, 57.2 and 55.6 s of CPU, 2026-12-04). svc calls the same fsyncs on a tmpfs; what the
 * tests check of them (a SIGKILLed process's writes kept) is the page cache's on either. Tests that need
 * another file system mount one of their own (`smallDisk`, `failedExt4`).
 */
function tmpdirEnv(): Record<string, string> {
  if (process.env.TMPDIR) return {};
  try {
    const shm = statfsSync("/dev/shm");
    accessSync("/dev/shm", constants.W_OK | constants.X_OK);
    return shm.type === TMPFS_MAGIC && shm.bavail * shm.bsize >= TMPFS_ROOM ? { TMPDIR: "/dev/shm" } : {};
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
    env: { ...SUITE_ENV, ...python3Env(), ...tmpdirEnv() },
    // SVC_TEST_FILE_CPU=<file>: each test file's CPU, its own and its children's, appended there (fileCpu.ts).
    setupFiles: [
      "./test/helpers/removeLeftHomes.ts",
      ...(process.env.SVC_TEST_FILE_CPU ? ["./test/helpers/fileCpu.ts"] : []),
    ],
    // Longest file first, from the committed durations where this clone has no record of its own.
    sequence: { sequencer: DurationSequencer },
    reporters: ["default", "./test/helpers/summaryReporter.ts"],
  },
});
