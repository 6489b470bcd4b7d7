import { spawn } from "node:child_process";
import { SVC_ARGV } from "./cliEntry.js";

/** Whether the suite runs as root, which `svcAsUser` needs to run svc as another user. */
export const AS_ROOT = process.getuid?.() === 0;

/** The unprivileged user (nobody) `svcAsUser` runs svc as when the suite runs as root. */
export const OTHER_USER = 65534;

/**
 * `svc <args>` on `home` as another user than the suite's (nobody, through setpriv) when the suite runs as
 * root, else as the suite's own user: its exit code and what it wrote to stderr.
 */
export function svcAsUser(
  home: string,
  args: readonly string[],
  /** A command expected to end by itself (a refused start) is killed past this, so a run that went on fails the test. */
  killAfterMs?: number,
): Promise<{ code: number | null; stderr: string }> {
  const argv = [process.execPath, ...SVC_ARGV, ...args];
  const [command, ...rest] = AS_ROOT
    ? ["setpriv", `--reuid=${OTHER_USER}`, `--regid=${OTHER_USER}`, "--clear-groups", ...argv]
    : argv;
  const child = spawn(command as string, rest, {
    env: { PATH: process.env.PATH ?? "", HOME: home, SVC_HOME: home },
    stdio: ["ignore", "ignore", "pipe"],
  });
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
