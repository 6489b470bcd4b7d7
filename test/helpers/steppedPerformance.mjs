// Preload for CLI tests (`node --import`): `performance.now`, the monotonic clock svc times its waits on, as
// a simulated clock the test steps: the process's own plus the milliseconds written in the file
// SVC_TEST_PERFORMANCE_STEP_FILE names (none while the file is absent), read at each call, so a command
// waiting for a lock, asynchronously or blocking its thread, sees a step at its next look. Instrumentation
// only: what the command does is unchanged.
import { readFileSync } from "node:fs";

const file = process.env.SVC_TEST_PERFORMANCE_STEP_FILE;
const ownNow = performance.now.bind(performance);
performance.now = () => {
  let step = 0;
  try {
    step = Number(readFileSync(file, "utf8")) || 0;
  } catch {
    // Not stepped yet.
  }
  return ownNow() + step;
};
