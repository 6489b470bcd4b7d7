import { spawn } from "node:child_process";
import { python3 } from "./python.js";

/** One step of a terminal conversation: wait until the output shows `expect`, then type `type`. */
export interface PtyStep {
  readonly expect: string;
  readonly type: string;
}

export interface PtyResult {
  readonly code: number | null;
  /** Everything the terminal showed: the program's output and the echo of what was typed. */
  readonly screen: string;
  /** Whether the terminal echoes typed characters once the program has exited (as the shell needs it). */
  readonly echo: boolean;
}

// Runs argv on a pseudo-terminal (Python's pty module: Node has none built in) and plays the steps:
// each answer is typed only once its prompt is on the screen, as a person would (typed-ahead input
// would be echoed by the terminal before the program could turn echo off).
const DRIVER = `
import json, os, pty, select, sys, termios, time
spec = json.loads(sys.argv[1])
pid, fd = pty.fork()
if pid == 0:
    os.execvpe(spec["argv"][0], spec["argv"], spec["env"])
screen = b""
since = 0
steps = spec["steps"]
deadline = time.time() + spec["timeout"]
while time.time() < deadline:
    if steps and steps[0]["expect"].encode() in screen[since:]:
        os.write(fd, steps.pop(0)["type"].encode())
        since = len(screen)  # the next prompt must appear after this answer
        continue
    ready, _, _ = select.select([fd], [], [], 0.1)
    if ready:
        try:
            data = os.read(fd, 4096)
        except OSError:
            break
        if not data:
            break
        screen += data
else:
    # Still running when the time is up (waiting on a prompt that never came): ended here, so the test
    # fails on what the screen shows instead of leaving the program behind, blocked on its terminal.
    os.kill(pid, 9)
_, status = os.waitpid(pid, 0)
echo = bool(termios.tcgetattr(fd)[3] & termios.ECHO)
sys.stdout.write(json.dumps({"code": os.waitstatus_to_exitcode(status), "screen": screen.decode("utf8", "replace"), "echo": echo}))
`;

/** Runs `argv` on a pseudo-terminal, answering each prompt in turn; resolves when it exits. */
export function runOnTerminal(
  argv: readonly string[],
  env: Record<string, string>,
  steps: readonly PtyStep[],
  timeoutMs = 60_000,
): Promise<PtyResult> {
  const spec = JSON.stringify({ argv, env, steps, timeout: timeoutMs / 1000 });
  return new Promise((resolve, reject) => {
    const child = spawn(python3(), ["-S", "-c", DRIVER, spec], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("error", reject);
    child.on("close", () => {
      try {
        resolve(JSON.parse(out) as PtyResult);
      } catch {
        reject(new Error(`pty driver failed: ${err || out}`));
      }
    });
  });
}
