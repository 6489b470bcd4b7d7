import { mkdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";

/**
 * The OAuth callback ports 27890–27894 are one resource for the whole machine, and test files run in
 * parallel: `pinnedPorts.test.ts` holds all five for moments and counts on the one a login took being free
 * for the next, and the conformance scenario that needs a pinned port (`auth/basic-cimd`: a client metadata
 * document is presented only there) fails when it finds them busy; any browser login to a server never
 * reached before takes one. Every test that logs in so takes this lock (a directory: `mkdir` is atomic)
 * for the time it may use the ports: those two, the conformance driver's other `auth/` scenarios, and the
 * files that call `pinnedPortsForFile`.
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

/** Holds the lock from the file's first test to its last: for a file whose logins may take a pinned port. */
export function pinnedPortsForFile(): void {
  let release: (() => void) | undefined;
  beforeAll(async () => {
    release = await acquirePinnedPorts();
  }, 200_000);
  afterAll(() => release?.());
}
