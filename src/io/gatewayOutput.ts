import { openSync } from "node:fs";
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
      `${file}: cannot be written (${describeError(err)}) — svc gateway start keeps the gateway's output there: make ${logs} writable (a read-only file system, its owner, a full disk), or set SVC_HOME to a directory this user can write`,
    );
  }
}
