import { writeSync } from "node:fs";

/**
 * A reader that stops reading (`svc webhook list | head -1`, `svc webhook subscribe x | grep -q Secret`)
 * closes the pipe, and the next write to it fails with EPIPE: an 'error' event that would end the command
 * with a stack trace and exit 1 after its work (a subscription written, a job created) was done. What was
 * left to print has nowhere to go, so it is dropped, and the command ends as it would have, with its own
 * exit code. So is a terminal that hung up (EIO: its window closed, an ssh session dropped), which
 * `svc mcp call` still tells it was interrupted while it cancels its call, and any failed write to stderr,
 * which has nowhere else to say it. Any other write error of stdout (redirected to a file on a full disk)
 * is said once on stderr, and the command, which still does its work (a run's last_run recorded), exits 1
 * unless it fails with a code of its own: a script must not take the cut output for all of it.
 */
export function quietWhenOutputCloses(stream: NodeJS.WritableStream, name: "stdout" | "stderr"): void {
  let failed = false;
  stream.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE" || err.code === "EIO" || err.code === "ERR_STREAM_DESTROYED") return;
    if (name === "stderr" || failed) return;
    failed = true;
    try {
      writeSync(
        2,
        `svc: the output could not be written to stdout (${err.message}) — what was printed is incomplete\n`,
      );
    } catch {
      // stderr fails too: the exit code says it.
    }
    process.once("exit", () => {
      if (!process.exitCode) process.exitCode = 1;
    });
  });
}
