import { fstatSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LOCK_FILE, StateDirTakenOver } from "../../../src/io/state/journal/dirLock.js";
import { type JournalFs, nodeJournalFs } from "../../../src/io/state/journal/fsFacade.js";
import { RotationBlocked } from "../../../src/io/state/journal/rotation.js";
import { type SegmentProblem, segmentName, tempSegmentName } from "../../../src/io/state/journal/segments.js";
import { journalErrorLine } from "../../../src/state/gatewayState.js";
import {
  cleanUpJournals,
  fillableDisk,
  journalDir,
  journalFiles,
  keyed,
  openJournal,
} from "../../helpers/journal.js";

/**
 * A rotation under way when another gateway takes the state directory over (this one paused past the bound a
 * gateway of another PID namespace waits): that gateway's start removes the temp files, replays this journal
 * and writes its own first segment, numbered past this one's current segment: the number this rotation
 * gives its temp file. What is left of the rotation must not touch that segment, also when that gateway has
 * stopped since (its lock released).
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

/** The other gateway's start as above, then its stop: its lock removed, its segment 2 left. */
function takenOverAndReleased(dir: string): void {
  takenOverBy(dir);
  rmSync(join(dir, LOCK_FILE));
}

/** node:fs whose `held` call (the first that `holds` picks) waits until released. */
function holdingFs(held: "fdatasync" | "link", holds: (arg: number | string) => boolean) {
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
          link: async (from: string, to: string) => {
            await hold(from);
            return nodeJournalFs.link(from, to);
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

/**
 * A journal whose rotation's naming of its segment (the link) waits while `takeOver` acts on its directory;
 * resolves once that rotation is over, with the errors it reported.
 */
async function rotatedWhileNamingWaited(takeOver: (dir: string) => void) {
  const dir = journalDir();
  const errors: unknown[] = [];
  const { fs, reached, release } = holdingFs("link", () => true);
  const { journal } = openJournal(dir, { fs, maxSegmentBytes: 2048, errors, now: () => 1_000_000 });
  await appendUntil(journal, reached);
  takeOver(dir);
  release();
  await journal.rotated();
  return { dir, journal, errors };
}

describe("a rotation under way when another gateway takes the state directory over", () => {
  it("taken over while its snapshot was synced: stopped before its segment is named, the other gateway's segment kept, only the takeover said", async () => {
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

  it("taken over while its segment's naming waited (the temp file removed by the other's start, the link fails): the other gateway's segment under that name is not removed, and no failed rotation is said", async () => {
    const { dir, journal, errors } = await rotatedWhileNamingWaited(takenOverBy);
    expect(readFileSync(join(dir, segmentName(2)), "utf8")).toBe(THEIR_SEGMENT);
    expect(journalFiles(dir)).toEqual([segmentName(2)]);
    expect(errors).toEqual([expect.any(StateDirTakenOver)]);
    expect(journal.currentSegment().n).toBe(1);
    await journal.close();
    expect(readFileSync(join(dir, LOCK_FILE), "utf8")).toBe(THEIR_LOCK);
  });

  it("taken over and released while the flush that crossed the size was synced: the rotation begun after it is stopped before its segment is named, the other gateway's segment kept, only the takeover said", async () => {
    const dir = journalDir();
    const errors: unknown[] = [];
    const current = join(dir, segmentName(1));
    let armed = false;
    // The current segment's sync of the batch that crosses the rotation size.
    const isCurrent = (fd: number | string) => {
      const at = statSync(current, { throwIfNoEntry: false });
      return armed && at !== undefined && at.ino === fstatSync(fd as number).ino;
    };
    const { fs: holding, reached, release } = holdingFs("fdatasync", isCurrent);
    const links: string[] = [];
    const fs: JournalFs = {
      ...holding,
      link: (from, to) => {
        links.push(to);
        return holding.link(from, to);
      },
    };
    const { journal } = openJournal(dir, { fs, maxSegmentBytes: 2048, errors, now: () => 1_000_000 });
    journal.append({ k: "first", pad: "x".repeat(500) });
    await journal.durable();
    armed = true;
    journal.append({ k: "crossing", pad: "y".repeat(3000) });
    const crossing = journal.durable();
    await reached;
    // The other gateway started (this one's temp file not made yet: nothing for its start to remove) and stopped.
    takenOverAndReleased(dir);
    release();
    await crossing;
    await journal.rotated();
    expect(links).toEqual([]);
    expect(readFileSync(join(dir, segmentName(2)), "utf8")).toBe(THEIR_SEGMENT);
    expect(journalFiles(dir)).toEqual([segmentName(2)]);
    expect(errors).toEqual([expect.any(StateDirTakenOver)]);
    expect((errors[0] as Error).message).toContain("was released by another gateway");
    expect(journal.accepting()).toBe(false);
    journal.append({ k: "after" });
    await expect(journal.durable()).rejects.toBeInstanceOf(StateDirTakenOver);
    await journal.close();
    expect(journalFiles(dir)).toEqual([segmentName(2)]);
  });

  it("taken over and released while its segment's naming waited (the link fails, the temp file removed): reported as the takeover, not as a failed rotation, and appends are refused", async () => {
    const { dir, journal, errors } = await rotatedWhileNamingWaited(takenOverAndReleased);
    expect(readFileSync(join(dir, segmentName(2)), "utf8")).toBe(THEIR_SEGMENT);
    expect(journalFiles(dir)).toEqual([segmentName(2)]);
    expect(errors).toEqual([expect.any(StateDirTakenOver)]);
    expect(journal.accepting()).toBe(false);
    journal.append({ k: "after" });
    await expect(journal.durable()).rejects.toBeInstanceOf(StateDirTakenOver);
    await journal.close();
    expect(journalFiles(dir)).toEqual([segmentName(2)]);
  });
});

describe("a rotation never gives its segment's name in place of a file there", () => {
  const THERE = "a file already under the segment's name\n";

  it("a file at that name when it is given (the lock still this gateway's): the rotation fails, the file is left as it was and named, the current segment keeps the appends", async () => {
    const dir = journalDir();
    const errors: unknown[] = [];
    const { fs, reached, release } = holdingFs("link", () => true);
    const { journal } = openJournal(dir, { fs, maxSegmentBytes: 2048, errors, now: () => 1_000_000 });
    await appendUntil(journal, reached);
    writeFileSync(join(dir, segmentName(2)), THERE);
    release();
    await journal.rotated();
    expect(readFileSync(join(dir, segmentName(2)), "utf8")).toBe(THERE);
    expect(journalFiles(dir)).toEqual([segmentName(1), segmentName(2)]);
    expect(errors).toEqual([expect.any(RotationBlocked)]);
    expect((errors[0] as RotationBlocked).file).toBe(join(dir, segmentName(2)));
    expect(((errors[0] as RotationBlocked).cause as Error).message).toContain("EEXIST");
    expect(journal.currentSegment().n).toBe(1);
    journal.append({ k: "after" });
    await journal.durable();
    expect(journal.accepting()).toBe(true);
  });

  it("on a file system without hard links (link fails EPERM) the segment is named by a rename, and a file at that name is looked at first and left as it was", async () => {
    const dir = journalDir();
    const errors: unknown[] = [];
    let placeFile = false;
    const fs: JournalFs = {
      ...nodeJournalFs,
      link: async (_from, to) => {
        if (placeFile) writeFileSync(to, THERE);
        throw Object.assign(new Error(`EPERM: operation not permitted, link '${to}'`), { code: "EPERM" });
      },
    };
    const { journal } = openJournal(dir, { fs, maxSegmentBytes: 2048, errors, now: () => 1_000_000 });
    for (const record of keyed("r", 10, 300)) journal.append(record);
    await journal.durable();
    await journal.rotated();
    expect(errors).toEqual([]);
    expect(journal.currentSegment().n).toBe(2);
    expect(journalFiles(dir)).toEqual([segmentName(2)]);

    placeFile = true;
    for (const record of keyed("s", 10, 300)) journal.append(record);
    await journal.durable();
    await journal.rotated();
    expect(readFileSync(join(dir, segmentName(3)), "utf8")).toBe(THERE);
    expect(journalFiles(dir)).toEqual([segmentName(2), segmentName(3)]);
    expect(errors).toEqual([expect.any(RotationBlocked)]);
    expect((errors[0] as RotationBlocked).file).toBe(join(dir, segmentName(3)));
    expect(((errors[0] as RotationBlocked).cause as Error).message).toContain("EEXIST");
    expect(journal.currentSegment().n).toBe(2);
  });

  it("a file put there that is not this gateway's (no other gateway's trace): named once, the segment never numbered past it, and the rotation goes on once it is moved away, without a restart", async () => {
    const dir = journalDir();
    const errors: unknown[] = [];
    const links: string[] = [];
    const fs: JournalFs = {
      ...nodeJournalFs,
      link: (from, to) => {
        links.push(to);
        return nodeJournalFs.link(from, to);
      },
    };
    // A simulated clock: the once-a-second look comes only when the test moves it on.
    let now = 1_000_000;
    const { journal } = openJournal(dir, { fs, maxSegmentBytes: 2048, errors, now: () => now });
    const stray = join(dir, segmentName(2));
    writeFileSync(stray, "not mine\n");
    // Past the size many times over (every quarter of it a retry, before): one rotation, one line.
    for (const record of keyed("r", 40, 300)) {
      journal.append(record);
      await journal.durable();
      await journal.rotated();
    }
    expect(links).toEqual([stray]);
    expect(errors).toEqual([expect.any(RotationBlocked)]);
    const { message, cause } = journalErrorLine(dir, errors[0]);
    expect(message).toContain(
      `[state] ${stray} is in the way of the journal's next segment and is not this gateway's — move it out of the state directory; until then the journal does not rotate (current segment 0.0 MB, growing with every record);`,
    );
    expect(message).not.toContain("disk has room");
    expect(cause).toContain("EEXIST");
    expect(readFileSync(stray, "utf8")).toBe("not mine\n");
    expect(journal.currentSegment().n).toBe(1);
    expect(journal.currentSegment().bytes).toBeGreaterThan(4 * 2048);
    expect(journal.accepting()).toBe(true);

    // Still there a second later: no retry, nothing said again.
    now += 1000;
    journal.append({ k: "still" });
    await journal.durable();
    await journal.rotated();
    expect(links).toEqual([stray]);
    expect(errors).toHaveLength(1);

    rmSync(stray);
    // Moved away: the look a second later finds it gone, and the next flush rotates into segment 2.
    now += 1000;
    journal.append({ k: "moved" });
    await journal.durable();
    await journal.rotated();
    expect(links).toEqual([stray, stray]);
    expect(errors).toHaveLength(1);
    expect(journal.currentSegment().n).toBe(2);
    expect(journalFiles(dir)).toEqual([segmentName(2)]);
    await journal.close();
    const problems: SegmentProblem[] = [];
    const { journal: reopened } = openJournal(dir, { problems });
    expect(problems).toEqual([]);
    expect(reopened.currentSegment().n).toBe(3);
  });
  it("an outage while a file is in the way: the line is said again, with the runs and groups a restart would run again, once per outage; moved away, the restatement runs", async () => {
    const dir = journalDir();
    const errors: unknown[] = [];
    const { fs, disk } = fillableDisk();
    // A simulated clock: the once-a-second look comes only when the test moves it on.
    let now = 1_000_000;
    const { journal } = openJournal(dir, { fs, maxSegmentBytes: 2048, errors, now: () => now });
    const stray = join(dir, segmentName(2));
    writeFileSync(stray, "not mine\n");
    for (const record of keyed("r", 20, 300)) {
      journal.append(record);
      await journal.durable();
      await journal.rotated();
    }
    expect(errors).toEqual([expect.any(RotationBlocked)]);
    expect((errors[0] as RotationBlocked).restating).toBe(false);

    const outage = async () => {
      disk.full = true;
      journal.append({ k: "lost-finish" });
      await journal.durable()?.catch(() => {});
      disk.full = false;
      now += 1000;
      journal.append({ k: "after" });
      await journal.durable()?.catch(() => {});
      await journal.rotated();
    };
    await outage();
    const blocked = errors.filter((e) => e instanceof RotationBlocked);
    expect(blocked).toHaveLength(2);
    expect((blocked[1] as RotationBlocked).restating).toBe(true);
    expect((blocked[1] as RotationBlocked).file).toBe(stray);
    const { message, cause } = journalErrorLine(dir, blocked[1]);
    expect(message).toContain(
      "growing with every record) and runs that finished and groups that fired while writes failed would run again after a restart;",
    );
    expect(cause).toContain("EEXIST");
    // Nothing more said while no outage ends; a second outage is said once too.
    now += 1000;
    journal.append({ k: "still" });
    await journal.durable();
    await journal.rotated();
    expect(errors.filter((e) => e instanceof RotationBlocked)).toHaveLength(2);
    await outage();
    expect(errors.filter((e) => e instanceof RotationBlocked)).toHaveLength(3);
    expect(journal.currentSegment().n).toBe(1);

    rmSync(stray);
    now += 1000;
    journal.append({ k: "moved" });
    await journal.durable();
    await journal.rotated();
    expect(journal.currentSegment().n).toBe(2);
    expect(errors.filter((e) => e instanceof RotationBlocked)).toHaveLength(3);
    await journal.close();
  });
});
