import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect, vi } from "vitest";
import { LOCK_FILE } from "../../src/io/state/journal/dirLock.js";
import { SVC_ARGV } from "./cliEntry.js";
import type { TempHome } from "./home.js";

/**
 * `svc gateway run <args>` in `at`, held at its start by a state/LOCK a gateway of another PID namespace
 * touched just now (it waits up to 15 s for it to stay untouched): resolves once it says it waits. The
 * process is pushed on `children`, for the test to kill.
 */
export async function heldAtStart(
  at: TempHome,
  args: readonly string[],
  children: ChildProcess[],
): Promise<ChildProcess> {
  const dir = join(at.dir, "state");
  mkdirSync(dir, { recursive: true });
  const gone = spawnSync("true").pid as number;
  writeFileSync(join(dir, LOCK_FILE), `${gone} 12345 their-token pid:[4026530000]\n`, { mode: 0o600 });
  const child = spawn(process.execPath, [...SVC_ARGV, "gateway", "run", ...args], {
    env: { PATH: process.env.PATH ?? "", HOME: at.dir, SVC_HOME: at.dir },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let out = "";
  child.stdout?.on("data", (d) => (out += d));
  child.stderr?.on("data", (d) => (out += d));
  await vi.waitFor(
    () => expect(out).toMatch(/\[state\] .* names a gateway of another PID namespace .*waiting up to/),
    { timeout: 30_000, interval: 50 },
  );
  return child;
}

/** SIGKILLs each of `children` still running and waits for its exit, emptying the list (afterEach). */
export async function killHeld(children: ChildProcess[]): Promise<void> {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await exited;
    }
}
