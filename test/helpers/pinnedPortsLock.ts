import { mkdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * The OAuth callback ports 27890–27894 are one resource for the whole machine, and test files run in
 * parallel: `pinnedPorts.test.ts` holds all five for moments, and the conformance scenario that needs a
 * pinned port (`auth/basic-cimd`: a client metadata document is presented only there) fails when it finds
 * them busy. Both take this lock (a directory: `mkdir` is atomic) for the time they use the ports.
 */
const LOCK = join(tmpdir(), "svc-tests-pinned-callback-ports.lock");
/** A holder that died without releasing it (a killed test run) leaves a lock older than any holding. */
const STALE_MS = 120_000;

export async function acquirePinnedPorts(timeoutMs = 180_000): Promise<() => void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      mkdirSync(LOCK);
      return () => rmSync(LOCK, { recursive: true, force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    try {
      if (Date.now() - statSync(LOCK).mtimeMs > STALE_MS) rmSync(LOCK, { recursive: true, force: true });
    } catch {
      // Released meanwhile.
    }
    if (Date.now() > deadline) throw new Error(`the pinned callback ports stayed locked (${LOCK})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
