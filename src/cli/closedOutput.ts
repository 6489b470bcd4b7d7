/**
 * A reader that stops reading (`svc webhook list | head -1`, `svc webhook subscribe x | grep -q Secret`)
 * closes the pipe, and the next write to it fails with EPIPE: an 'error' event that would end the command
 * with a stack trace and exit 1 after its work (a subscription written, a job created) was done. What was
 * left to print has nowhere to go, so it is dropped, and the command ends as it would have, with its own
 * exit code. So is a terminal that hung up (EIO: its window closed, an ssh session dropped), which
 * `svc mcp call` still tells it was interrupted while it cancels its call. Other write errors end the
 * command as before.
 */
export function quietWhenOutputCloses(stream: NodeJS.WritableStream): void {
  stream.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE" || err.code === "EIO" || err.code === "ERR_STREAM_DESTROYED") return;
    throw err;
  });
}
