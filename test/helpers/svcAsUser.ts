import { spawn } from "node:child_process";
import { chownSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll } from "vitest";
import { SVC_ARGV } from "./cliEntry.js";
import { OneCliProcess } from "./oneCliProcess.js";

/** Whether the suite runs as root, which `svcAsUser` needs to run svc as another user. */
export const AS_ROOT = process.getuid?.() === 0;

/** The unprivileged user (nobody) `svcAsUser` runs svc as when the suite runs as root. */
export const OTHER_USER = 65534;

/**
 * Makes temporary directories the command of `svcAsUser` owns (nobody's when the suite runs as root, whom
 * permissions do not stop), under `base` (the temp directory unless told), each removed after its test.
 */
export function ownedTempDirs(): (prefix?: string, base?: string) => string {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return (prefix = "svc-test-", base = tmpdir()) => {
    const dir = mkdtempSync(join(base, prefix));
    dirs.push(dir);
    if (AS_ROOT) chownSync(dir, OTHER_USER, OTHER_USER);
    return dir;
  };
}

/** What runs a command as svcAsUser's user: setpriv as nobody when the suite runs as root, else nothing. */
const AS_USER: readonly string[] = AS_ROOT
  ? ["setpriv", `--reuid=${OTHER_USER}`, `--regid=${OTHER_USER}`, "--clear-groups"]
  : [];

/** `argv` run as svcAsUser's user: the command and its arguments. */
function asUser(argv: readonly string[]): [string, string[]] {
  const [command, ...rest] = [...AS_USER, ...argv];
  return [command as string, rest];
}

/** The process the file's commands run in, once svcAsUserOneProcess() made one (else each spawns). */
let oneProcess: OneCliProcess | undefined;

/**
 * Makes svcAsUser run the file's commands in one process of that user (started at the first, stopped after the
 * file) instead of one each: the CLI's modules, which that user cannot take from root's code cache, load once.
 * Each command runs as `svc` runs it and still has its own environment, exit code and stderr; a command that
 * ends the process (`process.exit`) or is killed past its time ends it as it would its own, and one that left
 * what would keep its own process alive (a timer, a socket) reads as not exited (code null); see
 * oneCliProcess.ts. Commands that run at the same time still run in processes of their own. Call at a file's
 * top level.
 */
export function svcAsUserOneProcess(): void {
  beforeAll(() => {
    oneProcess = new OneCliProcess(AS_USER);
  });
  afterAll(async () => {
    await oneProcess?.stop();
    oneProcess = undefined;
  });
}

/**
 * `svc <args>` on `home` as another user than the suite's (nobody, through setpriv) when the suite runs as
 * root, else as the suite's own user: its exit code and what it wrote to stderr.
 */
export async function svcAsUser(
  home: string,
  args: readonly string[],
  /** A command expected to end by itself (a refused start) is killed past this, so a run that went on fails the test. */
  killAfterMs?: number,
  /** Variables set over HOME and SVC_HOME (`SVC_HOME: ""` leaves it unset, as svc reads it). */
  env: Readonly<Record<string, string>> = {},
): Promise<{ code: number | null; stderr: string }> {
  const commandEnv = { PATH: process.env.PATH ?? "", HOME: home, SVC_HOME: home, ...env };
  if (oneProcess?.free) {
    const { code, stderr } = await oneProcess.run(args, commandEnv, killAfterMs);
    return { code, stderr };
  }
  const [command, rest] = asUser([process.execPath, ...SVC_ARGV, ...args]);
  const child = spawn(command, rest, { env: commandEnv, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const guard = killAfterMs === undefined ? undefined : setTimeout(() => child.kill("SIGKILL"), killAfterMs);
  return new Promise((resolve) =>
    child.on("exit", (code) => {
      clearTimeout(guard);
      resolve({ code, stderr });
    }),
  );
}

/**
 * `svc gateway run --port 0` on `home` as `svcAsUser`'s user: whether it listened (it is then stopped with
 * SIGTERM), its exit code and what it wrote to stderr. A start refused ends by itself, before it listens.
 */
export function gatewayRunAsUser(
  home: string,
): Promise<{ listened: boolean; code: number | null; stderr: string }> {
  const [command, rest] = asUser([process.execPath, ...SVC_ARGV, "gateway", "run", "--port", "0"]);
  const child = spawn(command, rest, {
    env: { PATH: process.env.PATH ?? "", HOME: home, SVC_HOME: home },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  let listened = false;
  child.stdout.on("data", (d) => {
    stdout += d;
    if (!listened && stdout.includes("Listening on")) {
      listened = true;
      child.kill("SIGTERM");
    }
  });
  child.stderr.on("data", (d) => (stderr += d));
  return new Promise((resolve) => child.on("exit", (code) => resolve({ listened, code, stderr })));
}
