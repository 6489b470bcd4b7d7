import { accessSync, closeSync, constants, mkdirSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { encodeRecord } from "../../../src/io/state/journal/records.js";
import { readSegment, segmentName } from "../../../src/io/state/journal/segments.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

const homes: TempHome[] = [];

/**
 * Where the sparse segment goes: a tmpfs (`/dev/shm`) where there is one, since reading 2 GiB of holes there
 * copies from the zero page (~1.3 CPU-s on the 2-core test machine), where a disk's file system fills 2 GiB
 * of page cache with zeros first (~8 CPU-s); elsewhere the system's temporary directory.
 */
function sparseParent(): string | undefined {
  try {
    accessSync("/dev/shm", constants.W_OK);
    return "/dev/shm";
  } catch {
    return undefined;
  }
}
afterEach(() => {
  for (const home of homes.splice(0)) home.cleanup();
});

/**
 * The journal holds what is live, so a backlog of runs whose prompts quote large payloads (the run queue
 * holds up to 100,000) makes a segment of gigabytes. `readFileSync` refuses a file past 2 GiB: the start
 * was refused ("… cannot be read (File size … is greater than 2 GiB) — check that the directory and its
 * files can be read …"), and the runs it held never ran.
 */
/** Hundreds of MiB touched: on a VM whose page faults are slow (~10 µs each) and six files beside it, 30 s ran out. */
const HEAVY_MS = 120_000;

describe("a segment past 2 GiB", () => {
  it(
    "is read whole at start, not refused",
    () => {
      const home = tempHome(sparseParent());
      homes.push(home);
      const dir = join(home.dir, "state");
      mkdirSync(dir);
      const first = encodeRecord({ t: "s", k: "pr:first", at: 1 });
      const last = encodeRecord({ t: "s", k: "pr:last", at: 2 });
      // Sparse: the 2 GiB between the two records take no room on the disk.
      const fd = openSync(join(dir, segmentName(1)), "w", 0o600);
      try {
        writeSync(fd, first, 0, first.length, 0);
        writeSync(fd, last, 0, last.length, 2 ** 31 + 4096);
      } finally {
        closeSync(fd);
      }
      const data = readSegment(join(dir, segmentName(1)));
      expect(data.length).toBe(2 ** 31 + 4096 + last.length);
      expect(data.subarray(0, first.length).equals(first)).toBe(true);
      expect(data.subarray(data.length - last.length).equals(last)).toBe(true);
    },
    HEAVY_MS,
  );
});
