import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempPath } from "./home.js";

/** The preload that makes a process's `performance.now` a clock the test steps (see steppedPerformance.mjs). */
export const STEPPED_PERFORMANCE = join(import.meta.dirname, "steppedPerformance.mjs");

/**
 * The monotonic clock of the processes started with `nodeArgs` (after the loader) and `env`, stepped by the
 * test: a process waiting out a bound on that clock (a lock of another PID namespace watched untouched for
 * FOREIGN_UNTOUCHED_MS) sees the step at its next look, rather than the test waiting the bound out. A process
 * started after a step counts from it: only its looks after a later step see that one.
 */
export interface SteppedClock {
  readonly nodeArgs: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  /** Moves the clock of those processes `ms` ahead. */
  step(ms: number): void;
  /**
   * How many times a process on this clock has read it since the last step (its first 20 reads counted, the
   * last process's to read it; 0 before any step): a command that reads it a known number of times a look (a
   * watch of gateway.pid) tells so that it has looked on the step, rather than the test sleeping.
   */
  readsSinceStep(): number;
}

export function steppedClock(): SteppedClock {
  const file = tempPath("svc-performance-step");
  const seenFile = tempPath("svc-performance-seen");
  let total = 0;
  return {
    nodeArgs: ["--import", STEPPED_PERFORMANCE],
    env: { SVC_TEST_PERFORMANCE_STEP_FILE: file, SVC_TEST_PERFORMANCE_SEEN_FILE: seenFile },
    step(ms) {
      total += ms;
      // Whole at every read (a read of the file half written would step the clock back).
      writeFileSync(`${file}.new`, String(total));
      renameSync(`${file}.new`, file);
    },
    readsSinceStep() {
      let seen = "";
      try {
        seen = readFileSync(seenFile, "utf8");
      } catch {
        return 0;
      }
      const [step, reads] = seen.split(" ").map(Number);
      return step === total ? (reads ?? 0) : 0;
    },
  };
}
