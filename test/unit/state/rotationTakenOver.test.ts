import { fstatSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LOCK_FILE, StateDirTakenOver } from "../../../src/io/state/journal/dirLock.js";
import { type JournalFs, nodeJournalFs } from "../../../src/io/state/journal/fsFacade.js";
import { segmentName, tempSegmentName } from "../../../src/io/state/journal/segments.js";
import { cleanUpJournals, journalDir, keyed, openJournal } from "../../helpers/journal.js";

/**
 * A rotation under way when another gateway takes the state directory over (this one paused past the bound a
 * gateway of another PID namespace waits): that gateway's start removes the temp files, replays this journal
 * and writes its own first segment, numbered past this one's current segment: the number this rotation
 * renames its temp file to. What is left of the rotation must not touch that segment.
 */

cleanUpJournals();

/** What the other gateway's start leaves: its lock, no temp file, its own segment 2 (this one's 1 replayed, removed). */
const THEIR_LOCK = "77 12345 their-token pid:[4026530000]\n";
const THEIR_SEGMENT = "the other gateway's segment\n";
function takenOverBy(dir: string): void {
  writeFileSync(join(dir, LOCK_FILE), THEIR_LOCK);
  rmSync(join(dir, tempSegmentName(2)), { force: true });
  rmSync(join(dir, segmentName(1)), { force: true });
  writeFileSync(join(dir, segmentName(2)), THEIR_SEGMENT);
}

/** node:fs whose `held` call (the first that `holds` picks) waits until released. */
function holdingFs(held: "fdatasync" | "rename", holds: (arg: number | string) => boolean) {
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let seen: () => void = () => {};
  const reached = new Promise<void>((resolve) => {
    seen = resolve;
  });
  let once = false;
  const hold = async (arg: number | string) => {
    if (once || !holds(arg)) return;
    once = true;
    seen();
    await released;
  };
  const fs: JournalFs = {
    ...nodeJournalFs,
    ...(held === "fdatasync"
      ? {
          fdatasync: async (fd: number) => {
            await hold(fd);
            return nodeJournalFs.fdatasync(fd);
          },
        }
      : {
          rename: async (from: string, to: string) => {
            await hold(from);
            return nodeJournalFs.rename(from, to);
          },
        }),
  };
  return { fs, reached, release };
}

/** Appends padded records until `reached` (the rotation's held call) settles; a 2 KB segment rotates soon. */
async function appendUntil(
  journal: { append(r: unknown): void; durable(): Promise<void> | undefined },
  reached: Promise<void>,
) {
  let there = false;
  void reached.then(() => {
    there = true;
  });
  for (const record of keyed("r", 200, 50)) {
    if (there) return;
    journal.append(record);
    await Promise.race([journal.durable()?.catch(() => {}), reached]);
  }
  throw new Error("the rotation's held call was never reached");
}

const journalFiles = (dir: string) => readdirSync(dir).filter((name) => name !== LOCK_FILE);

describe("a rotation under way when another gateway takes the state directory over", () => {
  it("taken over while its snapshot was synced: stopped before its rename, the other gateway's segment kept, only the takeover said", async () => {
    const dir = journalDir();
    const errors: unknown[] = [];
    const tmp = join(dir, tempSegmentName(2));
    // The rotation's sync of its temp file (the snapshot written), not the current segment's.
    const isTemp = (fd: number | string) => {
      const at = statSync(tmp, { throwIfNoEntry: false });
      return at !== undefined && at.ino === fstatSync(fd as number).ino;
    };
    const { fs, reached, release } = holdingFs("fdatasync", isTemp);
    // A clock that stands still: the once-a-second look never comes, only the rotation's own.
    const { journal } = openJournal(dir, { fs, maxSegmentBytes: 2048, errors, now: () => 1_000_000 });
    await appendUntil(journal, reached);
    takenOverBy(dir);
    release();
    await journal.rotated();
    expect(readFileSync(join(dir, segmentName(2)), "utf8")).toBe(THEIR_SEGMENT);
    expect(journalFiles(dir)).toEqual([segmentName(2)]);
    expect(errors).toEqual([expect.any(StateDirTakenOver)]);
    expect(journal.currentSegment().n).toBe(1);
    journal.append({ k: "after" });
    await expect(journal.durable()).rejects.toBeInstanceOf(StateDirTakenOver);
    await journal.close();
    expect(readFileSync(join(dir, LOCK_FILE), "utf8")).toBe(THEIR_LOCK);
  });

  it("taken over while its rename waited (the temp file removed by the other's start, the rename fails): the other gateway's segment under that name is not removed, and no failed rotation is said", async () => {
    const dir = journalDir();
    const errors: unknown[] = [];
    const { fs, reached, release } = holdingFs("rename", () => true);
    const { journal } = openJournal(dir, { fs, maxSegmentBytes: 2048, errors, now: () => 1_000_000 });
    await appendUntil(journal, reached);
    takenOverBy(dir);
    release();
    await journal.rotated();
    expect(readFileSync(join(dir, segmentName(2)), "utf8")).toBe(THEIR_SEGMENT);
    expect(journalFiles(dir)).toEqual([segmentName(2)]);
    expect(errors).toEqual([expect.any(StateDirTakenOver)]);
    expect(journal.currentSegment().n).toBe(1);
    await journal.close();
    expect(readFileSync(join(dir, LOCK_FILE), "utf8")).toBe(THEIR_LOCK);
  });
});
