import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { LOCK_FILE } from "../../src/io/state/journal/dirLock.js";

/**
 * What a gateway killed with SIGKILL leaves in its state directory: a lock naming a process that no
 * longer runs. For tests that "crash" a store in-process (open it again without closing it).
 */
export function leaveLockAsCrashed(stateDir: string): void {
  const exited = spawnSync("true").pid as number;
  writeFileSync(join(stateDir, LOCK_FILE), `${exited} 1 crashed-token\n`, { mode: 0o600 });
}
