import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/** A throwaway SVC_HOME; call `cleanup` in afterEach/afterAll. */
export interface TempHome {
  readonly dir: string;
  write(relative: string, text: string, mode?: number): string;
  cleanup(): void;
}

export function tempHome(): TempHome {
  const dir = mkdtempSync(join(tmpdir(), "svc-test-"));
  return {
    dir,
    write(relative, text, mode) {
      const path = join(dir, relative);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, text, mode === undefined ? {} : { mode });
      return path;
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
