import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/** A throwaway SVC_HOME; call `cleanup` in afterEach/afterAll (one a file forgets goes at its end). */
export interface TempHome {
  readonly dir: string;
  write(relative: string, text: string, mode?: number): string;
  cleanup(): void;
}

/** Homes made and not yet cleaned up, in this worker. */
const live = new Set<string>();

/** `parent`: the directory to make it in (the system's temporary directory unless told). */
export function tempHome(parent = tmpdir()): TempHome {
  const dir = mkdtempSync(join(parent, "svc-test-"));
  live.add(dir);
  return {
    dir,
    write(relative, text, mode) {
      const path = join(dir, relative);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, text, mode === undefined ? {} : { mode });
      return path;
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
      live.delete(dir);
    },
  };
}

/**
 * A fresh path in the temporary directory for a file a test's processes make (an agent's log, a release
 * marker): removed after the test file, as a home it left is. `suffix`: e.g. `.log`.
 */
export function tempPath(name: string, suffix = ""): string {
  const path = join(tmpdir(), `${name}-${randomUUID()}${suffix}`);
  live.add(path);
  return path;
}

/**
 * Removes the homes a test file made and did not clean up (run after each file by
 * test/helpers/removeLeftHomes.ts): a suite run left ~360 of them in the temporary directory.
 */
export function removeLeftHomes(): void {
  for (const dir of live) {
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    live.delete(dir);
  }
}
