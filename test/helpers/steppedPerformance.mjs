// Preload for CLI tests (`node --import`): `performance.now`, the monotonic clock svc times its waits on, as
// a simulated clock the test steps: the process's own plus the milliseconds written in the file
// SVC_TEST_PERFORMANCE_STEP_FILE names (none while the file is absent), read at each call, so a command
// waiting for a lock, asynchronously or blocking its thread, sees a step at its next look. Its first reads of
// each step are counted in the file SVC_TEST_PERFORMANCE_SEEN_FILE names ("<step> <reads>", up to SEEN_COUNTED
// of them), so the test can tell that the command has looked on the stepped clock. Instrumentation only: what the command does is unchanged.
import { readFileSync, renameSync, writeFileSync } from "node:fs";

const file = process.env.SVC_TEST_PERFORMANCE_STEP_FILE;
const seenFile = process.env.SVC_TEST_PERFORMANCE_SEEN_FILE;
const ownNow = performance.now.bind(performance);
/** Reads of one step counted, at most (a running gateway reads its clock often). */
const SEEN_COUNTED = 20;
let seenStep = 0;
let seenReads = 0;
performance.now = () => {
  let step = 0;
  try {
    step = Number(readFileSync(file, "utf8")) || 0;
  } catch {
    // Not stepped yet.
  }
  if (step !== seenStep) {
    seenStep = step;
    seenReads = 0;
  }
  if (seenFile !== undefined && step !== 0 && seenReads < SEEN_COUNTED) {
    seenReads += 1;
    try {
      // Whole at every read, as the step file is.
      writeFileSync(`${seenFile}.${process.pid}`, `${step} ${seenReads}`);
      renameSync(`${seenFile}.${process.pid}`, seenFile);
    } catch {
      // Not counted: the test waits on.
    }
  }
  return ownNow() + step;
};
