import { spawnSync } from "node:child_process";
import {
  copyFileSync,
  cpSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type JournalFs, nodeJournalFs } from "../../../src/io/state/journal/fsFacade.js";
import { JOURNAL_ID_FILE, readJournalId } from "../../../src/io/state/journal/identity.js";
import { SEGMENT_CHECK_MS } from "../../../src/io/state/journal/journal.js";
import { encodeRecords } from "../../../src/io/state/journal/records.js";
import { JournalNotRecreated, RotationBlocked } from "../../../src/io/state/journal/rotation.js";
import { type SegmentProblem, segmentName } from "../../../src/io/state/journal/segments.js";
import { leaveLockAsCrashed } from "../../helpers/crashedLock.js";
import {
  cleanUpJournals,
  journalDir,
  journalFiles,
  keyed,
  type OpenJournalOptions,
  openJournal,
  recordKey,
} from "../../helpers/journal.js";
import { CAN_MOUNT } from "../../helpers/smallDisk.js";

/**
 * docs/durability.md ("Which segments are this journal's", "Recovery, torn tails and corruption"): a file
 * at a segment's name that is no segment of this journal — put there by hand, a restore or a sync tool, in
 * the way of a rotation or not — is never taken for one. A readable segment of another state directory
 * there replaced this journal's state at the next start, silently (its snapshot was the last complete one),
 * and the journal's own segment was removed. A symbolic link to nothing or a directory there had the
 * rotation retried, and said, every second (the look followed the link, and found nothing), then refused
 * the next start (ENOENT, EISDIR).
 *
 * "Recovery, torn tails and corruption": a segment no record of which can be read, or an empty one, before
 * one whose snapshot is complete was said to have lost what it held, though that later snapshot restated it.
 * A relocation (the segment's path lost its file) numbered past a file in the way of a rotation leaves that
 * file below its segment: the next start says of it as of any other.
 */

cleanUpJournals();

/** A journal whose live state is `live` (what a store keeps): a record appended is live from then on. */
function liveJournal(dir: string, options: Omit<OpenJournalOptions, "live"> = {}) {
  const live: unknown[] = [];
  const opened = openJournal(dir, { ...options, live: () => [...live] });
  const append = async (records: unknown[]) => {
    for (const record of records) {
      live.push(record);
      opened.journal.append(record);
    }
    await opened.journal.durable();
  };
  return { ...opened, live, append };
}

/** Opens the journal again as a start after a kill does: what it replayed and said. */
function restart(dir: string) {
  leaveLockAsCrashed(dir);
  const problems: SegmentProblem[] = [];
  const { journal, replayed } = openJournal(dir, { problems });
  return { journal, replayed, problems };
}

/** Another state directory's journal, started twice: its segment 2, holding `records`, at its own number. */
async function otherJournalSegment2(records: unknown[]): Promise<string> {
  const other = journalDir();
  const first = openJournal(other);
  await first.journal.close();
  const second = openJournal(other, { live: records });
  await second.journal.close();
  return join(other, segmentName(2));
}

const keptAs = (dir: string, name: string, kind: "foreign" | "damaged") =>
  journalFiles(dir).find((file) => file.startsWith(`${name}.${kind}-`));

describe("a segment of another journal at a segment's name", () => {
  it("at the next segment's name while the gateway ran (the rotation blocked): the next start sets it aside, says so, and replays this journal's records", async () => {
    const dir = journalDir();
    const errors: unknown[] = [];
    let now = 1_000_000;
    const { journal, append } = liveJournal(dir, { maxSegmentBytes: 2048, errors, now: () => now });
    // Its own number (2) and a complete snapshot: only the journal it names tells it from this one's.
    const foreign = await otherJournalSegment2([{ t: "s", k: "theirs", at: 1 }]);
    const stray = join(dir, segmentName(2));
    copyFileSync(foreign, stray);
    for (const record of keyed("ours", 20, 300)) {
      await append([record]);
      await journal.rotated();
      now += SEGMENT_CHECK_MS;
    }
    expect(errors).toEqual([expect.any(RotationBlocked)]);
    expect(journal.currentSegment().n).toBe(1);
    const id = readJournalId(dir).id as string;
    const theirs = readJournalId(join(foreign, "..")).id as string;

    // Killed (a crash, kill -9) with the file still there.
    const { replayed, problems } = restart(dir);
    expect(replayed.map(recordKey)).toEqual(keyed("ours", 20).map(recordKey));
    const kept = keptAs(dir, segmentName(2), "foreign") as string;
    expect(problems).toEqual([
      {
        file: stray,
        problem: `is not this journal's: its snapshot names another journal (${theirs}; this one is ${id}, as journal.id says): a file of another state directory put at this name (by hand, a restore or a sync tool); nothing of it was replayed, and it is set aside as ${kept} (inspect it as docs/durability.md shows, then delete it)`,
      },
    ]);
    // Kept as it was; this journal's segment 1 is superseded by the start's own (3), which replays alike.
    expect(readFileSync(join(dir, kept))).toEqual(readFileSync(foreign));
    expect(journalFiles(dir).sort()).toEqual([kept, segmentName(3)]);
    expect(readJournalId(dir).id).toBe(id);
  });

  it("a copy of this journal's own older segment put at a later number: set aside, the segments at their own numbers replayed", async () => {
    const dir = journalDir();
    const first = liveJournal(dir);
    await first.append([{ t: "s", k: "a1", at: 1 }]);
    await first.journal.close();
    const older = readFileSync(join(dir, segmentName(1)));
    const second = liveJournal(dir);
    await second.append([
      { t: "s", k: "a1", at: 1 },
      { t: "s", k: "a2", at: 2 },
    ]);
    await second.journal.close();
    writeFileSync(join(dir, segmentName(3)), older, { mode: 0o600 });

    const { replayed, problems } = restart(dir);
    expect(replayed.map(recordKey)).toEqual(["a1", "a2"]);
    const kept = keptAs(dir, segmentName(3), "foreign") as string;
    expect(problems).toEqual([
      {
        file: join(dir, segmentName(3)),
        problem: `is not this journal's: its snapshot says it is segment 1 of this journal, not segment 3: a copy of one of this journal's segments put at this name (by hand, a restore or a sync tool); nothing of it was replayed, and it is set aside as ${kept} (inspect it as docs/durability.md shows, then delete it)`,
      },
    ]);
    expect(journalFiles(dir).sort()).toEqual([kept, segmentName(4)]);
  });

  it("a segment in an earlier version's form (its snapshot names no journal) after one of this journal's: set aside", async () => {
    const dir = journalDir();
    const { journal, append } = liveJournal(dir);
    await append([{ t: "s", k: "ours", at: 1 }]);
    await journal.close();
    const unnamed = encodeRecords([{ t: "snap" }, { t: "s", k: "older-svc", at: 2 }, { t: "snap-end" }]);
    writeFileSync(join(dir, segmentName(2)), unnamed, { mode: 0o600 });

    const { replayed, problems } = restart(dir);
    expect(replayed.map(recordKey)).toEqual(["ours"]);
    const kept = keptAs(dir, segmentName(2), "foreign") as string;
    expect(problems.map((p) => p.problem)).toEqual([
      `is not this journal's: its snapshot names no journal, as an earlier version of svc wrote them, yet it comes after ${segmentName(1)}, which names this one: a file put at this name (by hand, a restore or a sync tool), not this journal's continuation; nothing of it was replayed, and it is set aside as ${kept} (inspect it as docs/durability.md shows, then delete it)`,
    ]);
  });

  it("a journal an earlier version wrote (no id anywhere) is read as it was, and adopts an id at that start: written to journal.id (0600) and named by its new segment", async () => {
    const dir = journalDir();
    mkdirSync(dir, { recursive: true });
    const unnamed = encodeRecords([{ t: "snap" }, { t: "s", k: "kept", at: 1 }, { t: "snap-end" }]);
    writeFileSync(join(dir, segmentName(4)), unnamed, { mode: 0o600 });

    const { journal, replayed, problems } = restart(dir);
    expect(replayed.map(recordKey)).toEqual(["kept"]);
    expect(problems).toEqual([]);
    const id = readJournalId(dir).id as string;
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(lstatSync(join(dir, JOURNAL_ID_FILE)).mode & 0o777).toBe(0o600);
    await journal.close();
    const again = restart(dir);
    expect(again.problems).toEqual([]);
    expect(readJournalId(dir).id).toBe(id);
  });

  it("journal.id removed by hand, and another journal's segment at the next number: without journal.id the last complete snapshot is the journal's (as before ids), so this one's older segment is set aside, not removed", async () => {
    const dir = journalDir();
    const { journal, append } = liveJournal(dir);
    await append([{ t: "s", k: "ours", at: 1 }]);
    await journal.close();
    const id = readJournalId(dir).id as string;
    rmSync(join(dir, JOURNAL_ID_FILE));
    const foreign = await otherJournalSegment2([{ t: "s", k: "theirs", at: 1 }]);
    const theirs = readJournalId(join(foreign, "..")).id as string;
    copyFileSync(foreign, join(dir, segmentName(2)));

    const { replayed, problems } = restart(dir);
    expect(replayed.map(recordKey)).toEqual(["theirs"]);
    const kept = keptAs(dir, segmentName(1), "foreign") as string;
    expect(problems.map((p) => p.problem)).toEqual([
      `is not this journal's: its snapshot names another journal (${id}; this one is ${theirs}, as ${segmentName(2)}, whose snapshot was replayed (there is no usable journal.id), says): a file of another state directory put at this name (by hand, a restore or a sync tool); nothing of it was replayed, and it is set aside as ${kept} (inspect it as docs/durability.md shows, then delete it)`,
    ]);
    expect(readJournalId(dir).id).toBe(theirs);
  });

  it("no journal.id, this journal's segment in an earlier version's form and another journal's segment 1 copied in below it: the id is not taken from that stray, and this journal's segment is replayed", async () => {
    const dir = journalDir();
    mkdirSync(dir, { recursive: true });
    // This home's journal as an earlier version wrote it (segment 3, no id); another home's segment 1 beside it.
    const unnamed = encodeRecords([{ t: "snap" }, { t: "s", k: "ours", at: 1 }, { t: "snap-end" }]);
    writeFileSync(join(dir, segmentName(3)), unnamed, { mode: 0o600 });
    const other = journalDir();
    const theirs = openJournal(other, { live: [{ t: "s", k: "theirs", at: 1 }] });
    await theirs.journal.close();
    const theirId = readJournalId(other).id as string;
    copyFileSync(join(other, segmentName(1)), join(dir, segmentName(1)));

    const { replayed, problems } = restart(dir);
    // The segment an earlier version's start would have replayed (the last complete snapshot), as it would.
    expect(replayed.map(recordKey)).toEqual(["ours"]);
    expect(problems).toEqual([]);
    const id = readJournalId(dir).id as string;
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(id).not.toBe(theirId);
    expect(journalFiles(dir)).toEqual([segmentName(4)]);
  });

  it("another journal's segment at a wrong number after a journal an earlier version wrote (no id yet): said to name that journal while this one has no id, not to be a copy of this journal's", async () => {
    const dir = journalDir();
    mkdirSync(dir, { recursive: true });
    const unnamed = encodeRecords([{ t: "snap" }, { t: "s", k: "ours", at: 1 }, { t: "snap-end" }]);
    writeFileSync(join(dir, segmentName(3)), unnamed, { mode: 0o600 });
    const other = journalDir();
    const theirs = openJournal(other, { live: [{ t: "s", k: "theirs", at: 1 }] });
    await theirs.journal.close();
    const theirId = readJournalId(other).id as string;
    copyFileSync(join(other, segmentName(1)), join(dir, segmentName(5)));

    const { replayed, problems } = restart(dir);
    expect(replayed.map(recordKey)).toEqual(["ours"]);
    const kept = keptAs(dir, segmentName(5), "foreign") as string;
    expect(problems).toEqual([
      {
        file: join(dir, segmentName(5)),
        problem: `is not this journal's: its snapshot names journal ${theirId} (as its segment 1) while this journal has no id yet (its segments, in an earlier version's form, name none): a file of another state directory put at this name (by hand, a restore or a sync tool); nothing of it was replayed, and it is set aside as ${kept} (inspect it as docs/durability.md shows, then delete it)`,
      },
    ]);
    expect(readJournalId(dir).id).not.toBe(theirId);
  });

  it("journal.id removed, and another journal's segment 1 copied in below this journal's later segment: the id is this journal's, and the stray is set aside", async () => {
    const dir = journalDir();
    const first = liveJournal(dir);
    await first.append([{ t: "s", k: "ours", at: 1 }]);
    await first.journal.close();
    const second = liveJournal(dir);
    await second.append([{ t: "s", k: "ours", at: 1 }]);
    await second.journal.close();
    const id = readJournalId(dir).id as string;
    rmSync(join(dir, JOURNAL_ID_FILE));
    expect(journalFiles(dir)).toEqual([segmentName(2)]);
    const other = journalDir();
    const theirs = openJournal(other, { live: [{ t: "s", k: "theirs", at: 1 }] });
    await theirs.journal.close();
    const theirId = readJournalId(other).id as string;
    copyFileSync(join(other, segmentName(1)), join(dir, segmentName(1)));

    const { replayed, problems } = restart(dir);
    expect(replayed.map(recordKey)).toEqual(["ours"]);
    const kept = keptAs(dir, segmentName(1), "foreign") as string;
    expect(problems.map((p) => p.problem)).toEqual([
      `is not this journal's: its snapshot names another journal (${theirId}; this one is ${id}, as ${segmentName(2)}, whose snapshot was replayed (there is no usable journal.id), says): a file of another state directory put at this name (by hand, a restore or a sync tool); nothing of it was replayed, and it is set aside as ${kept} (inspect it as docs/durability.md shows, then delete it)`,
    ]);
    expect(readJournalId(dir).id).toBe(id);
  });

  it("journal.id holding no id (edited, truncated): said, and written again with the id the segments name", async () => {
    const dir = journalDir();
    const { journal, append } = liveJournal(dir);
    await append([{ t: "s", k: "ours", at: 1 }]);
    await journal.close();
    const id = readJournalId(dir).id as string;
    writeFileSync(join(dir, JOURNAL_ID_FILE), "not an id\n");

    const { replayed, problems } = restart(dir);
    expect(replayed.map(recordKey)).toEqual(["ours"]);
    expect(problems).toEqual([
      {
        file: join(dir, JOURNAL_ID_FILE),
        problem: `does not hold a journal id; it is written again with the id the segments name (${id})`,
      },
    ]);
    expect(readJournalId(dir).id).toBe(id);
  });
});

describe("no file at a segment's name (a symbolic link, a directory)", () => {
  it("a symbolic link to nothing at the next segment's name: the rotation waits for it, said once (each look finds the link, not what it leads to); a start with it there sets the link aside", async () => {
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
    let now = 1_000_000;
    const { journal, append } = liveJournal(dir, { fs, maxSegmentBytes: 2048, errors, now: () => now });
    const stray = join(dir, segmentName(2));
    const nowhere = join(dir, "..", "moved-away");
    symlinkSync(nowhere, stray);
    // A look each second: the link is still there (not what it leads to), so no rotation is begun again.
    for (const record of keyed("ours", 20, 300)) {
      await append([record]);
      await journal.rotated();
      now += SEGMENT_CHECK_MS;
    }
    expect(links).toEqual([stray]);
    expect(errors).toEqual([expect.any(RotationBlocked)]);
    expect(journal.currentSegment().n).toBe(1);

    const { replayed, problems } = restart(dir);
    expect(replayed.map(recordKey)).toEqual(keyed("ours", 20).map(recordKey));
    const kept = keptAs(dir, segmentName(2), "foreign") as string;
    expect(problems).toEqual([
      {
        file: stray,
        problem: `is a symbolic link to ${nowhere}, not a file: svc writes its segments as files, never as that, so it is no segment of this journal but something put at this name; nothing of it was replayed, and it is set aside as ${kept} (look at it, then delete it)`,
      },
    ]);
    // The link itself was renamed, still leading where it did.
    expect(readlinkSync(join(dir, kept))).toBe(nowhere);
    expect(journalFiles(dir).sort()).toEqual([kept, segmentName(3)]);
  });

  it("a directory at a segment's name: the start sets it aside (its mode and files as they were) and replays the journal", async () => {
    const dir = journalDir();
    const { journal, append } = liveJournal(dir);
    await append([{ t: "s", k: "ours", at: 1 }]);
    await journal.close();
    const stray = join(dir, segmentName(2));
    mkdirSync(stray, { mode: 0o755 });
    writeFileSync(join(stray, "inside"), "x");

    const { replayed, problems } = restart(dir);
    expect(replayed.map(recordKey)).toEqual(["ours"]);
    const kept = keptAs(dir, segmentName(2), "foreign") as string;
    expect(problems.map((p) => p.problem)).toEqual([
      `is a directory, not a file: svc writes its segments as files, never as that, so it is no segment of this journal but something put at this name; nothing of it was replayed, and it is set aside as ${kept} (look at it, then delete it)`,
    ]);
    expect(lstatSync(join(dir, kept)).mode & 0o777).toBe(0o755);
    expect(readFileSync(join(dir, kept, "inside"), "utf8")).toBe("x");
  });

  describe.skipIf(!CAN_MOUNT)("one that cannot be renamed (a mount point)", () => {
    const mounts: string[] = [];
    afterEach(() => {
      for (const mount of mounts.splice(0)) spawnSync("umount", [mount]);
    });

    it("is left where it is, and the start says what to move", async () => {
      const dir = journalDir();
      const { journal, append } = liveJournal(dir);
      await append([{ t: "s", k: "ours", at: 1 }]);
      await journal.close();
      const stray = join(dir, segmentName(2));
      mkdirSync(stray);
      expect(spawnSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", stray]).status).toBe(0);
      mounts.push(stray);

      const { replayed, problems } = restart(dir);
      expect(replayed.map(recordKey)).toEqual(["ours"]);
      expect(problems).toHaveLength(2);
      expect(problems[1]?.file).toBe(stray);
      expect(problems[1]?.problem).toMatch(
        new RegExp(
          `^could not be set aside as ${segmentName(2)}\\.foreign-\\d+ \\(EBUSY: .*\\): it is left where it is, and each start tries again — move it out of ${dir}$`,
        ),
      );
      expect(journalFiles(dir).sort()).toEqual([segmentName(2), segmentName(3)]);
    });
  });
});

describe("a segment no record of which can be read, before one with a complete snapshot", () => {
  it("is said not to have been needed, not to have lost what it held", async () => {
    const dir = journalDir();
    const first = liveJournal(dir);
    await first.append([{ t: "s", k: "a1", at: 1 }]);
    await first.journal.close();
    const second = liveJournal(dir);
    await second.append([
      { t: "s", k: "a1", at: 1 },
      { t: "s", k: "a2", at: 2 },
    ]);
    await second.journal.close();
    // Segment 2 whole; a 1 beside it (a crash right after a rotation) unreadable from its first byte on.
    writeFileSync(join(dir, segmentName(1)), "garbage garbage garbage", { mode: 0o600 });

    const { replayed, problems } = restart(dir);
    expect(replayed.map(recordKey)).toEqual(["a1", "a2"]);
    const kept = keptAs(dir, segmentName(1), "damaged") as string;
    expect(problems).toEqual([
      {
        file: join(dir, segmentName(1)),
        problem: `no record of it could be read (bad length at byte 0; 23 bytes skipped); it was not needed: ${segmentName(2)}, after it, starts with a complete snapshot of everything live, which was replayed, so nothing was lost; the segment is kept as ${kept} (inspect it as docs/durability.md shows, then delete it)`,
      },
    ]);
  });

  it("an empty one likewise", async () => {
    const dir = journalDir();
    const first = liveJournal(dir);
    await first.append([{ t: "s", k: "a1", at: 1 }]);
    await first.journal.close();
    const second = liveJournal(dir);
    await second.append([{ t: "s", k: "a1", at: 1 }]);
    await second.journal.close();
    writeFileSync(join(dir, segmentName(1)), "", { mode: 0o600 });

    const { replayed, problems } = restart(dir);
    expect(replayed.map(recordKey)).toEqual(["a1"]);
    expect(problems.map((p) => p.problem)).toEqual([
      `is empty (0 bytes); it was not needed: ${segmentName(2)}, after it, starts with a complete snapshot of everything live, which was replayed, so nothing was lost`,
    ]);
  });
});

describe("a relocation (the segment's path lost its file) numbered past a file in the way", () => {
  /**
   * A journal blocked by `place` at segment 2's name, whose segment 1 is then removed: the look a second
   * later restates what is live in segment 3, past the file, which stays below it. What the next start says.
   */
  async function relocatedPast(place: (stray: string) => Promise<void> | void) {
    const dir = journalDir();
    const errors: unknown[] = [];
    let now = 1_000_000;
    const { journal, append } = liveJournal(dir, { maxSegmentBytes: 2048, errors, now: () => now });
    const stray = join(dir, segmentName(2));
    await place(stray);
    for (const record of keyed("before", 10, 300)) {
      await append([record]);
      await journal.rotated();
    }
    expect(errors).toEqual([expect.any(RotationBlocked)]);
    rmSync(join(dir, segmentName(1)));
    now += SEGMENT_CHECK_MS;
    await append(keyed("after", 2));
    await journal.rotated();
    expect(journal.currentSegment().n).toBe(3);
    const { replayed, problems } = restart(dir);
    // What was appended while the relocation was under way is in its snapshot and copied behind it: one fact.
    expect([...new Set(replayed.map(recordKey))]).toEqual(
      [...keyed("before", 10), ...keyed("after", 2)].map(recordKey),
    );
    return { dir, stray, problems };
  }

  it("a loop of links in the state directory's place while a file blocks the rotation: the look does not throw, and the journal is not made again (said once)", async () => {
    const dir = journalDir();
    const errors: unknown[] = [];
    let now = 1_000_000;
    const { journal, append } = liveJournal(dir, { maxSegmentBytes: 2048, errors, now: () => now });
    writeFileSync(join(dir, segmentName(2)), "not a segment");
    for (const record of keyed("before", 10, 300)) {
      await append([record]);
      await journal.rotated();
    }
    expect(errors).toEqual([expect.any(RotationBlocked)]);
    // mv state state.old && ln -s state state: the look at the file in the way met ELOOP, and threw.
    renameSync(dir, `${dir}.old`);
    symlinkSync(dir, dir);
    for (let i = 0; i < 3; i += 1) {
      now += SEGMENT_CHECK_MS;
      await expect(append(keyed(`after${i}`, 1))).rejects.toThrow();
      await journal.rotated();
    }
    expect(errors.slice(1)).toEqual([expect.any(JournalNotRecreated)]);
    rmSync(dir);
    rmSync(`${dir}.old`, { recursive: true });
  });

  it("a file no record of which can be read: the start says it was not needed", async () => {
    const { dir, stray, problems } = await relocatedPast((file) => writeFileSync(file, "not mine\n"));
    const kept = keptAs(dir, segmentName(2), "damaged") as string;
    expect(problems).toEqual([
      {
        file: stray,
        problem: `no record of it could be read (truncated record at byte 0; 9 bytes skipped); it was not needed: ${segmentName(3)}, after it, starts with a complete snapshot of everything live, which was replayed, so nothing was lost; the segment is kept as ${kept} (inspect it as docs/durability.md shows, then delete it)`,
      },
    ]);
  });

  it("another journal's segment: set aside as not this journal's", async () => {
    const foreign = await otherJournalSegment2([{ t: "s", k: "theirs", at: 1 }]);
    const { dir, problems } = await relocatedPast((file) => copyFileSync(foreign, file));
    expect(problems.map((p) => p.problem)).toEqual([
      expect.stringContaining("its snapshot names another journal"),
    ]);
    expect(keptAs(dir, segmentName(2), "foreign")).toBeDefined();
  });
});

describe("a state directory copied (cp -a), or restored to another disk, or moved", () => {
  it("the copy's first start reads its segments and keeps their id (a new id written before a segment names it would, after a crash between the two, set every segment aside), journal.id left as it was", async () => {
    const a = journalDir();
    const first = liveJournal(a);
    await first.append([{ t: "s", k: "EA1", at: 1 }]);
    await first.journal.close();
    const original = readJournalId(a);
    const b = journalDir();
    cpSync(a, b, { recursive: true, preserveTimestamps: true });

    const problems: SegmentProblem[] = [];
    const copy = openJournal(b, { problems });
    expect(copy.replayed.map(recordKey)).toEqual(["EA1"]);
    expect(problems).toEqual([]);
    await copy.journal.close();
    expect(readJournalId(b)).toEqual(original);
    expect(readFileSync(join(b, JOURNAL_ID_FILE), "utf8")).toBe(`${original.id}\n`);
    expect(restart(b).problems).toEqual([]);
  });
});

describe("journal.id as an earlier version wrote it", () => {
  /** The state directory's device and inode, as the version that wrote the `dir` line wrote them. */
  const dirLine = (dir: string) => {
    const { dev, ino } = statSync(dir, { bigint: true });
    return `dir ${dev}:${ino}`;
  };

  it.each([
    ["naming this state directory", dirLine],
    ["naming another one (restored to another disk, moved, remounted)", () => "dir 2049:131073"],
  ])(
    "with the directory line (dir <dev>:<ino>) %s: read with its id, nothing said, and written again without the line (0600)",
    async (_, line) => {
      const dir = journalDir();
      const first = liveJournal(dir);
      await first.append([{ t: "s", k: "ours", at: 1 }]);
      await first.journal.close();
      const id = readJournalId(dir).id as string;
      const file = join(dir, JOURNAL_ID_FILE);
      writeFileSync(file, `${id}\n${line(dir)}\n`, { mode: 0o600 });
      expect(readJournalId(dir)).toEqual({ id, dirLine: true });

      const { journal, replayed, problems } = restart(dir);
      expect(replayed.map(recordKey)).toEqual(["ours"]);
      expect(problems).toEqual([]);
      expect(readFileSync(file, "utf8")).toBe(`${id}\n`);
      expect(lstatSync(file).mode & 0o777).toBe(0o600);
      expect(journalFiles(dir)).toEqual([segmentName(2)]);
      await journal.close();
      // The next start finds the id as this version writes it, named by the segment this one wrote.
      const again = restart(dir);
      expect(again.problems).toEqual([]);
      expect(readJournalId(dir)).toEqual({ id });
      await again.journal.close();
    },
  );

  it("the id alone (as this version writes it) is taken as it is and not written again", async () => {
    const dir = journalDir();
    const first = liveJournal(dir);
    await first.append([{ t: "s", k: "ours", at: 1 }]);
    await first.journal.close();
    const id = readJournalId(dir).id as string;
    const file = join(dir, JOURNAL_ID_FILE);
    const before = lstatSync(file, { bigint: true }).ino;

    const { journal, replayed, problems } = restart(dir);
    expect(replayed.map(recordKey)).toEqual(["ours"]);
    expect(problems).toEqual([]);
    expect(readFileSync(file, "utf8")).toBe(`${id}\n`);
    // Written again, it would be another file renamed into place.
    expect(lstatSync(file, { bigint: true }).ino).toBe(before);
    await journal.close();
  });

  it("a second line that is no directory line: said, and written again with the id the segments name", async () => {
    const dir = journalDir();
    const first = liveJournal(dir);
    await first.append([{ t: "s", k: "ours", at: 1 }]);
    await first.journal.close();
    const id = readJournalId(dir).id as string;
    const file = join(dir, JOURNAL_ID_FILE);
    writeFileSync(file, `${id}\nsomething else\n`, { mode: 0o600 });

    const { journal, replayed, problems } = restart(dir);
    expect(replayed.map(recordKey)).toEqual(["ours"]);
    expect(problems).toEqual([
      {
        file,
        problem: `does not hold a journal id; it is written again with the id the segments name (${id})`,
      },
    ]);
    expect(readFileSync(file, "utf8")).toBe(`${id}\n`);
    await journal.close();
  });
});

describe("journal.id that is no file (a directory, a symbolic link to nothing)", () => {
  it("a directory: the start sets it aside as journal.id.foreign-<ms>, says so, writes the id and goes on", async () => {
    const dir = journalDir();
    const { journal, append } = liveJournal(dir);
    await append([{ t: "s", k: "ours", at: 1 }]);
    await journal.close();
    const id = readJournalId(dir).id as string;
    const at = join(dir, JOURNAL_ID_FILE);
    rmSync(at);
    mkdirSync(at, { mode: 0o755 });
    writeFileSync(join(at, "inside"), "x");

    const { replayed, problems } = restart(dir);
    expect(replayed.map(recordKey)).toEqual(["ours"]);
    const kept = journalFiles(dir).find((name) => name.startsWith(`${JOURNAL_ID_FILE}.foreign-`)) as string;
    expect(problems).toEqual([
      {
        file: at,
        problem: `is a directory, not a file: svc writes it as a file, never as that; it is set aside as ${kept} (look at it, then delete it), and the id the segments name (${id}) is written in its place`,
      },
    ]);
    expect(readJournalId(dir).id).toBe(id);
    expect(readFileSync(join(dir, kept, "inside"), "utf8")).toBe("x");
    expect(journalFiles(dir).sort()).toEqual([segmentName(2), kept]);
  });

  it("a symbolic link to nothing: set aside likewise (the link as it was)", async () => {
    const dir = journalDir();
    const { journal, append } = liveJournal(dir);
    await append([{ t: "s", k: "ours", at: 1 }]);
    await journal.close();
    const at = join(dir, JOURNAL_ID_FILE);
    rmSync(at);
    const nowhere = join(dir, "..", "gone");
    symlinkSync(nowhere, at);

    const { replayed, problems } = restart(dir);
    expect(replayed.map(recordKey)).toEqual(["ours"]);
    const kept = journalFiles(dir).find((name) => name.startsWith(`${JOURNAL_ID_FILE}.foreign-`)) as string;
    expect(problems.map((p) => p.problem)).toEqual([
      expect.stringMatching(
        new RegExp(`^is a symbolic link to .*gone, not a file: .* it is set aside as ${kept} \\(`),
      ),
    ]);
    expect(readlinkSync(join(dir, kept))).toBe(nowhere);
    expect(lstatSync(at).isFile()).toBe(true);
  });

  it("a directory found when the journal writes it again (a relocation, its segment's path lost its file): set aside, said, and the relocation goes on", async () => {
    const dir = journalDir();
    const errors: unknown[] = [];
    const problems: SegmentProblem[] = [];
    let now = 1_000_000;
    const { journal, append } = liveJournal(dir, { errors, problems, now: () => now });
    await append([{ t: "s", k: "before", at: 1 }]);
    const id = readJournalId(dir).id as string;
    const at = join(dir, JOURNAL_ID_FILE);
    rmSync(join(dir, segmentName(1)));
    rmSync(at);
    mkdirSync(at);
    now += SEGMENT_CHECK_MS;
    await append([{ t: "s", k: "after", at: 2 }]);
    await journal.rotated();

    expect(errors).toEqual([]);
    expect(journal.currentSegment().n).toBe(2);
    expect(problems[0]?.problem).toMatch(/^no longer names the file the gateway writes/);
    const kept = `${JOURNAL_ID_FILE}.foreign-${now}`;
    expect(problems.slice(1)).toEqual([
      {
        file: at,
        problem: `is a directory, not a file: svc writes it as a file, never as that; it is set aside as ${kept} (look at it, then delete it), and the journal's id (${id}) is written in its place`,
      },
    ]);
    expect(lstatSync(join(dir, kept)).isDirectory()).toBe(true);
    expect(readJournalId(dir).id).toBe(id);
  });
});
