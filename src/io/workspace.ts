import { createHash } from "node:crypto";
import { chmod, mkdir } from "node:fs/promises";
import { join } from "node:path";

/**
 * The directory name of a run's workspace: the run id is payload-derived (a delivery id header), so it is
 * reduced to safe characters and made unique again with a hash of the original.
 */
export function workspaceDirName(runId: string): string {
  const readable = runId.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64);
  const digest = createHash("sha256").update(runId).digest("hex").slice(0, 12);
  return `${readable}-${digest}`;
}

/**
 * Creates the working directory of one run in `parent` (mode 0700) and returns it: `name`, or `name-2`,
 * `name-3`, ... when an earlier run left one of that name (its delivery sent again past the idempotency
 * hour, a run started again after a restart), so a run never finds another run's files in its workspace.
 * (No run's `name` ends in `-<digit>`: it ends in 12 hex digits after a `-`.)
 */
export async function newRunWorkspace(parent: string, name: string): Promise<string> {
  await mkdir(parent, { recursive: true, mode: 0o700 });
  for (let n = 1; ; n++) {
    const dir = join(parent, n === 1 ? name : `${name}-${n}`);
    try {
      await mkdir(dir, { mode: 0o700 });
      return dir;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
  }
}

/**
 * Creates (if needed) and returns the run's working directory `<home>/workspaces/<run>`, mode 0700, as
 * `ToolContext.workspace()` hands it to the `terminal` and `file` tools. Idempotent.
 */
export async function createWorkspace(home: string, runId: string): Promise<string> {
  const parent = join(home, "workspaces");
  await mkdir(parent, { recursive: true, mode: 0o700 });
  const dir = join(parent, workspaceDirName(runId));
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  return dir;
}

/** `ToolContext.workspace` for a run: the directory is created on the first call only. */
export function lazyWorkspace(home: string, runId: string): () => Promise<string> {
  let made: Promise<string> | undefined;
  return () => {
    made ??= createWorkspace(home, runId);
    return made;
  };
}
