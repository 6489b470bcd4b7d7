import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, statSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { TokenStore } from "../../../src/io/oauth/tokenStore.js";
import { pidNamespace } from "../../../src/io/pidNamespace.js";
import { FOREIGN_UNTOUCHED_MS } from "../../../src/io/stores/fileLock.js";
import { CLI_NODE_ARGS, svcModule } from "../../helpers/cliEntry.js";
import { UNSHARE } from "../../helpers/container.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { type SteppedClock, steppedClock } from "../../helpers/steppedClock.js";

/**
 * A refresh's tokens lock taken in another PID namespace (a container on the host's SVC_HOME, standing in:
 * `unshare --pid`): its holder's pid cannot be checked from here, and a container killed while it held it
 * (SIGKILL, OOM, `docker kill`) leaves a lock naming a namespace that no longer exists, which neither the host
 * nor the container's next start could tell from a live one, so every refresh waited its 30 s and failed.
 * The holder touches its lock while it holds it; one a waiter has seen left untouched for FOREIGN_UNTOUCHED_MS
 * (on its own monotonic clock) is taken over.
 */

const HOLDER = join(import.meta.dirname, "../../helpers/holdTokensLock.mjs");
const MARK_WAITS = join(import.meta.dirname, "../../helpers/markLockWaits.mjs");

const children: ChildProcess[] = [];
let home: TempHome | undefined;
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  home?.cleanup();
});

/**
 * A process in a PID namespace of its own holding the tokens lock of `server` in `dir`, once it says so. With
 * `clock`, its monotonic clock is that one, stepped FOREIGN_UNTOUCHED_MS ahead once it waits for the lock
 * (the second time it finds it held: its first look is over), rather than waiting that long.
 */
async function holderElsewhere(
  dir: string,
  server: string,
  timeoutMs = 30_000,
  clock?: SteppedClock,
): Promise<ChildProcess> {
  const preloads = clock === undefined ? [] : [...clock.nodeArgs, "--import", MARK_WAITS];
  const child = spawn(
    "unshare",
    [
      "--pid",
      "--fork",
      "--mount-proc",
      "--kill-child",
      process.execPath,
      ...CLI_NODE_ARGS,
      ...preloads,
      HOLDER,
      dir,
      server,
      svcModule("io/oauth/tokenStore.js"),
    ],
    {
      stdio: ["ignore", "pipe", "pipe"],
      env: clock === undefined ? process.env : { ...process.env, ...clock.env, SVC_TEST_MARK_WAITS_AT: "2" },
    },
  );
  children.push(child);
  let out = "";
  let stepped = false;
  child.stdout?.on("data", (d) => (out += d));
  child.stderr?.on("data", (d) => {
    const text = String(d);
    // The preload's mark is not the holder's own output.
    const own = text
      .split(/(?<=\n)/)
      .filter((line) => !line.startsWith("[test] waiting "))
      .join("");
    out += own;
    if (clock !== undefined && !stepped && own !== text) {
      stepped = true;
      clock.step(FOREIGN_UNTOUCHED_MS);
    }
  });
  await vi.waitFor(() => expect(out).toBe("held\n"), { timeout: timeoutMs, interval: 20 });
  return child;
}

function killed(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.on("exit", () => resolve());
    child.kill("SIGKILL");
  });
}

/** The lock's time set back as if untouched for `ms` (rather than waiting that long). */
function untouchedFor(lock: string, ms: number): void {
  const at = new Date(Date.now() - ms);
  utimesSync(lock, at, at);
}

describe.runIf(UNSHARE && pidNamespace() !== undefined)(
  "a tokens lock of another PID namespace",
  { timeout: 90_000 },
  () => {
    it("is waited for while its holder runs and touches it, and taken over once its holder was killed, here and by a new namespace (a restarted container)", async () => {
      home = tempHome();
      const dir = join(home.dir, "mcp-tokens");
      const store = new TokenStore(dir, "github", undefined, { lockTimeoutMs: 300 });
      const lock = `${store.tokensPath}.lock`;

      const first = await holderElsewhere(dir, "github");
      const text = readFileSync(lock, "utf8");
      expect(text.split(" ")[3]).not.toBe(pidNamespace());
      // Left as if untouched past the bound: the live holder's heartbeat touches it again.
      untouchedFor(lock, FOREIGN_UNTOUCHED_MS + 1000);
      const setBack = statSync(lock).mtimeMs;
      await vi.waitFor(() => expect(statSync(lock).mtimeMs).toBeGreaterThan(setBack), {
        timeout: 20_000,
        interval: 50,
      });
      await expect(store.withLock(() => "refreshed")).rejects.toThrow(
        `${lock}: another svc process holds this lock (pid 1 of another PID namespace`,
      );
      expect(readFileSync(lock, "utf8")).toBe(text);

      // Killed while it held it: its namespace is gone with it, and nothing touches the lock any more. It is
      // watched for FOREIGN_UNTOUCHED_MS of this process's monotonic clock (simulated here), then taken over.
      await killed(first);
      vi.useFakeTimers({ toFake: ["performance"] });
      try {
        // Dated past the bound: still watched for it from its first sight.
        untouchedFor(lock, FOREIGN_UNTOUCHED_MS + 1000);
        const refreshed = store.withLock(() => "refreshed");
        await new Promise((resolve) => setTimeout(resolve, 400));
        expect(readFileSync(lock, "utf8")).toBe(text);
        vi.advanceTimersByTime(FOREIGN_UNTOUCHED_MS);
        expect(await refreshed).toBe("refreshed");
      } finally {
        vi.useRealTimers();
      }

      // Killed again, and the container started anew (another namespace): its refresh takes the lock over
      // once it has seen it untouched for FOREIGN_UNTOUCHED_MS (its clock, stepped once it waits: within its
      // 30 s wait).
      await killed(await holderElsewhere(dir, "github"));
      const left = readFileSync(lock, "utf8");
      const restarted = await holderElsewhere(dir, "github", 60_000, steppedClock());
      expect(readFileSync(lock, "utf8")).not.toBe(left);
      await killed(restarted);
    });
  },
);
