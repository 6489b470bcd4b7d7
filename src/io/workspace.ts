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
