import { closeSync, existsSync, fstatSync, openSync, readSync } from "node:fs";

export type LogLine = Record<string, unknown> & { msg: string; level: number };

/**
 * Reads a JSON-lines log as it grows: each call parses only the whole lines written since the last, so a
 * test that waits on a busy gateway's log does not re-parse megabytes on every poll.
 */
export function logTail(file: string): () => LogLine[] {
  let offset = 0;
  let partial = Buffer.alloc(0);
  return () => {
    if (!existsSync(file)) return [];
    const fd = openSync(file, "r");
    let fresh: Buffer;
    try {
      fresh = Buffer.alloc(Math.max(0, fstatSync(fd).size - offset));
      fresh = fresh.subarray(0, readSync(fd, fresh, 0, fresh.length, offset));
    } finally {
      closeSync(fd);
    }
    offset += fresh.length;
    // Cut at the last newline byte before decoding: a line still being written may end inside a character.
    const bytes = Buffer.concat([partial, fresh]);
    const end = bytes.lastIndexOf(0x0a) + 1;
    partial = bytes.subarray(end);
    return bytes
      .toString("utf8", 0, end)
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line) as LogLine);
  };
}
