import { openSync, readlinkSync } from "node:fs";
import { describeError, SvcError } from "../errors.js";
import { makeDirs } from "./makeDirs.js";

/**
 * Opens `file` (`logs/gateway.out`: the output of the gateway `svc gateway start` runs), making `logs` first.
 * SVC_HOME passed the writable check before, but that check can pass on a file system that refuses every
 * write (ext4 turned read-only by an error still answers `access` as writable): said naming the file.
 */
export function openGatewayOutput(logs: string, file: string): number {
  try {
    makeDirs(logs);
    return openSync(file, "a", 0o600);
  } catch (err) {
    throw new SvcError(
      "startup_refused",
      `${file}: cannot be written (${describeError(err)}) — svc gateway start keeps the gateway's output there: ${outputFix(logs, file, err)}, or set SVC_HOME to a directory this user can write`,
    );
  }
}

/** What to do about a `gateway.out` that could not be opened: a directory or a link to nothing in its place, else the directory. */
function outputFix(logs: string, file: string, err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === "EISDIR") return `${file} is a directory: move that directory away (svc makes the file)`;
  if (code === "ELOOP") return `${file} is a symbolic link that loops: remove the link`;
  if (code === "ENOENT") {
    try {
      return `${file} is a symbolic link to ${readlinkSync(file)}, which cannot be made: remove the link, or create the directory it points into`;
    } catch {
      // Not a link: the directory itself went away meanwhile.
    }
  }
  if (code === "EROFS") return `${logs} is on a read-only file system: remount it read-write`;
  return `make ${logs} writable (its owner, a full disk)`;
}
