import { existsSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type JournalFs, nodeJournalFs } from "../../../src/io/state/journal/fsFacade.js";
import { GROWTH_BYTES } from "../../../src/io/state/journal/groupCommit.js";
import { readJournalId } from "../../../src/io/state/journal/identity.js";
import { encodeRecord } from "../../../src/io/state/journal/records.js";
import {
  readJournal,
  type SegmentProblem,
  segmentName,
  snapshotBegin,
  tempSegmentName,
} from "../../../src/io/state/journal/segments.js";
import {
  appendAll,
  cleanUpJournals,
  crashImages,
  journalDir as dir,
  journalFiles,
  recordKey as key,
  keyed,
  openJournal as open,
  recordsEnd,
  segmentFiles as segments,
} from "../../helpers/journal.js";

cleanUpJournals();

interface Gate {
  /** Resolves when a write is being held. */
  readonly reached: Promise<void>;
  open(): void;
}

/**
 * node:fs whose writes to any file but the first segment the writer used (a rotation's file) wait while
 * a gate is set: the rotation stops mid-snapshot, the appends go on.
 */
function gatedRotationFs() {
  let segmentFd: number | undefined;
  let gate: { wait: Promise<void>; reached: () => void } | undefined;
  const fs: JournalFs = {
    ...nodeJournalFs,
    async write(fd, data, position) {
      segmentFd ??= fd;
      if (fd !== segmentFd && gate !== undefined) {
        gate.reached();
        await gate.wait;
      }
      return nodeJournalFs.write(fd, data, position);
    },
  };
  return {
    fs,
    hold(): Gate {
      let reached: () => void = () => {};
      let release: () => void = () => {};
      const reachedPromise = new Promise<void>((resolve) => {
        reached = resolve;
      });
      const wait = new Promise<void>((resolve) => {
        release = resolve;
      });
      gate = { wait, reached };
      return {
        reached: reachedPromise,
        open() {
          gate = undefined;
          release();
        },
      };
    },
  };
}

/**
 * A journal with 4 KB segments whose first rotation (once ~4 KB were appended) stops at its first write
 * until `gate.open()`. Nothing is live at the open (a large first snapshot would put that rotation far
 * off); `live` is what each later snapshot restates.
 */
function rotationHeldMidSnapshot(path: string, live: unknown[]) {
  const gated = gatedRotationFs();
  let opened = false;
  const { journal } = open(path, { fs: gated.fs, maxSegmentBytes: 4096, live: () => (opened ? live : []) });
  opened = true;
  return { journal, gate: gated.hold() };
}

describe("rotation and compaction", () => {
  it("a full segment is replaced by a new one that starts with a snapshot of what is live; the old one is removed", async () => {
    const path = dir();
    const live = [{ t: "s", k: "still-live", at: 1 }];
    const { journal } = open(path, { maxSegmentBytes: 4096, live });
    // Each round waits for a rotation it started to end, so how far a segment runs past the limit does
    // not depend on how fast the machine's syncs are against the appends.
    for (let round = 0; round < 20; round++) {
      await appendAll(journal, keyed(`dead-${round}`, 20, 40));
      await journal.rotated();
    }
    await journal.close();
    expect(journal.currentSegment().n).toBeGreaterThan(2);
    const files = segments(path);
    expect(files).toEqual([segmentName(journal.currentSegment().n)]);
    // 20 rounds of ~1.8 KB went in; what is left is the snapshot and at most the rounds since the last
    // rotation: past the limit by at most one round.
    expect(recordsEnd(join(path, files[0] as string))).toBeLessThan(4096 + 2 * 20 * 90);
    const { replayed } = open(path);
    // The snapshot restated what was live; only the records written after it follow.
    expect(replayed[0]).toEqual({ t: "s", k: "still-live", at: 1 });
    expect(replayed.length).toBeLessThan((20 * 20) / 2);
  });

  it("the segment a rotation starts is grown ahead of its records as well, from its first batch", async () => {
    const path = dir();
    const { journal } = open(path, { maxSegmentBytes: 4096 });
    while (journal.currentSegment().n < 2) {
      await appendAll(journal, keyed(`dead-${journal.currentSegment().n}`, 20, 40));
      await journal.rotated();
    }
    await appendAll(journal, keyed("after", 1));
    const file = join(path, segmentName(journal.currentSegment().n));
    expect(statSync(file).size).toBe(recordsEnd(file) + GROWTH_BYTES);
    expect(recordsEnd(file)).toBe(journal.currentSegment().bytes);
  });

  it("appends stay durable while a rotation writes its snapshot; the new segment holds the snapshot, then every record appended meanwhile", async () => {
    const path = dir();
    const live = keyed("live", 5000);
    const { journal, gate } = rotationHeldMidSnapshot(path, live);
    await appendAll(journal, keyed("before", 60, 40));
    await gate.reached;

    // The rotation is held in the middle of its snapshot; appends are durable in segment 1 all the same.
    for (let round = 0; round < 5; round++) await appendAll(journal, keyed(`during-${round}`, 4));
    expect(journal.currentSegment().n).toBe(1);
    expect(existsSync(join(path, tempSegmentName(2)))).toBe(true);
    expect(segments(path)).toEqual([segmentName(1)]);

    gate.open();
    await journal.rotated();
    expect(journal.currentSegment().n).toBe(2);
    await appendAll(journal, keyed("after", 1));
    await journal.close();
    expect(journalFiles(path)).toEqual([segmentName(2)]);
    expect(statSync(join(path, segmentName(2))).mode & 0o777).toBe(0o600);

    const { replayed } = open(path);
    const during = Array.from({ length: 5 }, (_, round) => keyed(`during-${round}`, 4)).flat();
    expect(replayed).toEqual([...live, ...during, ...keyed("after", 1)]);
  });

  it("a crash at any step of a rotation loses no acknowledged record (a copy of the directory after every file operation replays them all)", async () => {
    const path = dir();
    const crash = crashImages(path, nodeJournalFs);
    // The first record of each round stays live (each snapshot restates it); the others are dropped by
    // the first snapshot after them.
    const live = new Map<string, unknown>(keyed("live", 1500).map((record) => [record.k, record]));
    const { journal } = open(path, { fs: crash.fs, maxSegmentBytes: 16 * 1024, live: () => live.values() });
    let rotationsSeen = 0;
    for (let round = 0; round < 150; round++) {
      const records = keyed(`r${round}`, 5, 450);
      live.set(records[0]?.k as string, records[0]);
      const segment = journal.currentSegment().n;
      await appendAll(journal, records);
      crash.acknowledged = round + 1;
      if (journal.currentSegment().n !== segment) rotationsSeen += 1;
    }
    await journal.rotated();
    expect(rotationsSeen).toBeGreaterThanOrEqual(3);
    // The images caught the rotation's states: a temp file beside the segment, and two segments at once.
    expect(crash.images.some((shot) => shot.files.some((name) => name.endsWith(".tmp")))).toBe(true);
    expect(crash.images.some((shot) => shot.files.filter((name) => name.endsWith(".seg")).length === 2)).toBe(
      true,
    );

    for (const shot of crash.images) {
      const read = readJournal(shot.dir);
      expect(read.problems).toEqual([]);
      const keys = new Set(read.records.map(key));
      const expected = [
        ...Array.from({ length: 1500 }, (_, i) => `live-${i}`),
        ...Array.from({ length: shot.acknowledged }, (_, round) => `r${round}-0`),
      ];
      expect(expected.filter((k) => !keys.has(k))).toEqual([]);
    }
  });

  it("a crash between the new segment's link and the temp name's removal (both names on its file): the start removes the temp name only and replays every acknowledged record", async () => {
    const path = dir();
    const crash = crashImages(path, nodeJournalFs);
    const live = keyed("live", 20, 100);
    const { journal } = open(path, { fs: crash.fs, maxSegmentBytes: 2048, live });
    const records = keyed("r", 10, 300);
    await appendAll(journal, records);
    crash.acknowledged = records.length;
    await journal.rotated();
    expect(journal.currentSegment().n).toBe(2);
    const bothNames = crash.images.filter(
      (shot) => shot.files.includes(segmentName(2)) && shot.files.includes(tempSegmentName(2)),
    );
    expect(bothNames).not.toHaveLength(0);
    for (const shot of bothNames) {
      const problems: SegmentProblem[] = [];
      const { replayed } = open(shot.dir, { problems, live: [] });
      expect(problems).toEqual([]);
      expect(readdirSync(shot.dir).some((name) => name.endsWith(".tmp"))).toBe(false);
      const keys = new Set(replayed.map(key));
      expect(live.map(key).filter((k) => !keys.has(k))).toEqual([]);
    }
  });

  it("a stop during a rotation removes its temp file; every record appended is in the current segment", async () => {
    const path = dir();
    const { journal, gate } = rotationHeldMidSnapshot(path, keyed("live", 3000));
    const before = keyed("before", 60, 40);
    await appendAll(journal, before);
    await gate.reached;
    await appendAll(journal, keyed("during", 3));
    const closed = journal.close();
    gate.open();
    await closed;
    expect(journalFiles(path)).toEqual([segmentName(1)]);
    const { replayed } = open(path);
    expect(replayed).toEqual([...before, ...keyed("during", 3)]);
  });

  it("a temp file a crash left mid-rotation is removed at the next start and never read", async () => {
    const path = dir();
    const { journal } = open(path);
    await appendAll(journal, keyed("kept", 2));
    await journal.close();
    writeFileSync(join(path, tempSegmentName(2)), encodeRecord({ t: "snap" }), { mode: 0o600 });
    const problems: SegmentProblem[] = [];
    const { replayed } = open(path, { problems });
    expect(replayed).toEqual(keyed("kept", 2));
    expect(problems).toEqual([]);
    expect(existsSync(join(path, tempSegmentName(2)))).toBe(false);
  });

  it("a segment whose snapshot was cut short is skipped; the previous segment is used", async () => {
    const path = dir();
    const { journal } = open(path);
    await appendAll(journal, keyed("kept", 1));
    await journal.close();
    // The first record of segment 2's snapshot, as a start cut short after it wrote it leaves it.
    const { id } = readJournalId(path);
    writeFileSync(join(path, segmentName(2)), encodeRecord(snapshotBegin(id as string, 2)), { mode: 0o600 });
    const problems: SegmentProblem[] = [];
    const { replayed } = open(path, { problems });
    expect(replayed).toEqual(keyed("kept", 1));
    expect(problems[0]?.problem).toMatch(/snapshot is incomplete/);
  });
});
