// Preload for bench/crashLoop.ts --small-segments (the gateway from source: node --import tsx --import <this> src/cli/main.ts):
// a journal segment rotates once 8 KB (PROBE_SEGMENT_BYTES) were appended past its snapshot, instead of past 64 MB
// or twice its snapshot, so rotations happen within a short burst.
import { Journal } from "../src/io/state/journal/journal.ts";

const extra = Number(process.env.PROBE_SEGMENT_BYTES ?? 8 * 1024);
let said = false;
Journal.prototype.limit = function smallLimit() {
  if (!said) process.stderr.write(`probe: segments rotate at ${this.snapshotBytes + extra} bytes\n`);
  said = true;
  return this.snapshotBytes + extra;
};
