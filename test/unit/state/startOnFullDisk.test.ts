import { readdirSync } from "node:fs";
import { describe, expect, it, vi } from "vitest";
import { GROWTH_BYTES } from "../../../src/io/state/journal/groupCommit.js";
import { segmentName } from "../../../src/io/state/journal/segments.js";
import { leaveLockAsCrashed } from "../../helpers/crashedLock.js";
import { cleanUpJournals, journalDir, openJournal } from "../../helpers/journal.js";

/**
 * The disk under the journal, for its start's snapshot (written with node:fs at once, not through the
 * journal's fs facade): while `room` is set, a write of bytes past a file's end takes them from it, and one
 * that finds too few writes what fits, then fails with ENOSPC; a cut gives bytes back.
 */
const disk = vi.hoisted(() => ({ room: Number.POSITIVE_INFINITY }));

vi.mock("node:fs", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs")>();
  const noSpace = () =>
    Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
  const writeSync = (fd: number, data: unknown, ...rest: unknown[]): number => {
    const call = real.writeSync as (...args: unknown[]) => number;
    if (disk.room === Number.POSITIVE_INFINITY || !Buffer.isBuffer(data)) return call(fd, data, ...rest);
    const [offset = 0, length = data.length - (offset as number), position] = rest as number[];
    const size = real.fstatSync(fd).size;
    // Without a position the file is written where the last write ended: its end, for the journal's files.
    const at = typeof position === "number" ? position : size;
    const fits = Math.max(0, Math.min(length, size + disk.room - at));
    if (fits === 0) throw noSpace();
    const written =
      typeof position === "number" ? call(fd, data, offset, fits, position) : call(fd, data, offset, fits);
    disk.room -= Math.max(0, at + written - size);
    return written;
  };
  const cut =
    <A extends unknown[]>(sizeOf: (...args: A) => number, truncate: (...args: A) => void) =>
    (...args: A): void => {
      const size = sizeOf(...args);
      truncate(...args);
      disk.room += Math.max(0, size - ((args[1] as number | undefined) ?? 0));
    };
  const ftruncateSync = cut(
    (fd: number, _length?: number) => real.fstatSync(fd).size,
    (fd, length) => real.ftruncateSync(fd, length),
  );
  const truncateSync = cut(
    (path: string, _length?: number) => real.statSync(path).size,
    (path, length) => real.truncateSync(path, length),
  );
  const ftruncate = (fd: number, length: number, done: (err: Error | null) => void): void => {
    const size = real.fstatSync(fd).size;
    real.ftruncate(fd, length, (err) => {
      if (err === null) disk.room += Math.max(0, size - length);
      done(err);
    });
  };
  const mocked = { writeSync, ftruncateSync, truncateSync, ftruncate };
  return { ...real, ...mocked, default: { ...real, ...mocked } };
});

cleanUpJournals();

const runs = [0, 1, 2].map((i) => ({ t: "s", k: `run-${i}`, at: i }));

describe("a start after a crash on a disk the journal's grown space filled", () => {
  it("cuts the dead gateway's zeros off its segment before its snapshot needs the room: the start opens with every record", async () => {
    const path = journalDir();
    const { journal } = openJournal(path);
    for (const run of runs) journal.append(run);
    await journal.durable();
    // The dead gateway's segment: its records, and a step of zeros grown ahead of them; then the disk
    // filled up (a log, another program) and the gateway was killed.
    expect(readdirSync(path)).toContain(segmentName(1));
    disk.room = 0;
    leaveLockAsCrashed(path);
    try {
      const { replayed } = openJournal(path);
      expect(replayed).toEqual(runs);
      expect(readdirSync(path).filter((name) => name.endsWith(".seg"))).toEqual([segmentName(2)]);
      // The zeros given back, less the snapshot's bytes.
      expect(disk.room).toBeGreaterThan(GROWTH_BYTES / 2);
    } finally {
      disk.room = Number.POSITIVE_INFINITY;
    }
  });
});
