import { constants } from "node:buffer";
import {
  appendFileSync,
  chmodSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { type JournalFs, nodeJournalFs } from "../../../src/io/state/journal/fsFacade.js";
import { GROWTH_BYTES, MAX_SYNCS_IN_FLIGHT } from "../../../src/io/state/journal/groupCommit.js";
import { readJournalId } from "../../../src/io/state/journal/identity.js";
import { encodeRecord, HEADER_BYTES } from "../../../src/io/state/journal/records.js";
import { type SegmentProblem, segmentName, snapshotBegin } from "../../../src/io/state/journal/segments.js";
import { leaveLockAsCrashed } from "../../helpers/crashedLock.js";
import {
  cleanUpJournals,
  cutToRecords,
  journalDir as dir,
  openJournal as open,
  recordsEnd,
  segmentFiles as segments,
} from "../../helpers/journal.js";

cleanUpJournals();

/** node:fs with every call counted; `holdSync` makes the next fdatasync wait until released. */
function countingFs() {
  const calls = { write: 0, fdatasync: 0 };
  let hold: Promise<void> | undefined;
  let release: () => void = () => {};
  const fs: JournalFs = {
    ...nodeJournalFs,
    write(fd, data, position) {
      calls.write += 1;
      return nodeJournalFs.write(fd, data, position);
    },
    async fdatasync(fd) {
      calls.fdatasync += 1;
      if (hold !== undefined) await hold;
      return nodeJournalFs.fdatasync(fd);
    },
  };
  return {
    fs,
    calls,
    holdSync() {
      hold = new Promise((resolve) => {
        release = () => {
          hold = undefined;
          resolve();
        };
      });
    },
    release: () => release(),
  };
}

/** A journal in `path` whose first segment holds records k0..k4, durable: that segment's file. */
/** A segment holding five records, as the writer leaves it (grown ahead of them in zeros). */
async function grownSegmentOfFiveRecords(path: string): Promise<string> {
  const { journal } = open(path);
  for (let i = 0; i < 5; i++) journal.append({ t: "s", k: `k${i}`, at: i });
  await journal.durable();
  return join(path, segmentName(1));
}

/** The same, cut back to its records: each test then damages its end as a crash (or a disk) would. */
async function segmentOfFiveRecords(path: string): Promise<string> {
  const file = await grownSegmentOfFiveRecords(path);
  cutToRecords(file);
  return file;
}

const fiveRecords = [0, 1, 2, 3, 4].map((i) => ({ t: "s", k: `k${i}`, at: i }));

/** The bytes of segment 1's snapshot of nothing in the journal at `path`: its first mark (naming the journal) and its last. */
const emptySnapshotBytes = (path: string) =>
  encodeRecord(snapshotBegin(readJournalId(path).id as string, 1)).length +
  encodeRecord({ t: "snap-end" }).length;

/** Starts again as after a crash: what it replayed, what it said of the segments, and the files left. */
function reopen(path: string) {
  leaveLockAsCrashed(path);
  const problems: SegmentProblem[] = [];
  const { replayed } = open(path, { problems });
  const files = readdirSync(path).filter((name) => name.startsWith("journal-"));
  return { replayed, problems: problems.map((p) => p.problem), files };
}

describe("group commit", () => {
  it("records appended in the same turn share one write and one fdatasync", async () => {
    const path = dir();
    const counting = countingFs();
    const { journal } = open(path, { fs: counting.fs });
    expect(journal.durable()).toBeUndefined();
    const waits = Array.from({ length: 256 }, (_, i) => {
      journal.append({ t: "s", k: `r:${i}`, at: i });
      return journal.durable();
    });
    await Promise.all(waits);
    expect(counting.calls).toEqual({ write: 1, fdatasync: 1 });
    expect(journal.durable()).toBeUndefined();
  });

  it("records appended while the syncs in flight are at their limit wait, then share the next write", async () => {
    const path = dir();
    const counting = countingFs();
    const { journal } = open(path, { fs: counting.fs });
    counting.holdSync();
    const held: Array<Promise<void> | undefined> = [];
    for (let i = 0; i < MAX_SYNCS_IN_FLIGHT; i++) {
      journal.append({ t: "s", k: `held:${i}`, at: i });
      held.push(journal.durable());
      // A batch written while the earlier ones sync starts its own sync without waiting for theirs.
      await vi.waitFor(() => expect(counting.calls.fdatasync).toBe(i + 1), { timeout: 2000, interval: 1 });
    }
    let laterDone = 0;
    const later = Array.from({ length: 100 }, (_, i) => {
      journal.append({ t: "s", k: `later:${i}`, at: i });
      return journal.durable()?.then(() => laterDone++);
    });
    await new Promise((resolve) => setImmediate(resolve));
    // At the limit: the hundred are not written until a sync ends.
    expect(counting.calls).toEqual({ write: MAX_SYNCS_IN_FLIGHT, fdatasync: MAX_SYNCS_IN_FLIGHT });
    expect(laterDone).toBe(0);
    counting.release();
    await Promise.all([...held, ...later]);
    expect(laterDone).toBe(100);
    expect(counting.calls).toEqual({ write: MAX_SYNCS_IN_FLIGHT + 1, fdatasync: MAX_SYNCS_IN_FLIGHT + 1 });
  });

  it("a failed write rejects the waiting records' promise (the request is answered 503, not 202)", async () => {
    const path = dir();
    const failing: JournalFs = {
      ...nodeJournalFs,
      write: () => Promise.reject(new Error("ENOSPC")),
      fdatasync: () => Promise.resolve(),
    };
    const { journal } = open(path, { fs: failing });
    journal.append({ t: "s", k: "x", at: 1 });
    await expect(journal.durable()).rejects.toThrow("ENOSPC");
  });
});

describe("reading the journal back", () => {
  it("replays every record written before a restart, in order, from a new 0600 segment", async () => {
    const path = dir();
    const { journal } = open(path);
    for (let i = 0; i < 10; i++) journal.append({ t: "s", k: `k${i}`, at: i });
    await journal.durable();
    leaveLockAsCrashed(path);
    const { replayed } = open(path);
    expect(replayed).toEqual(Array.from({ length: 10 }, (_, i) => ({ t: "s", k: `k${i}`, at: i })));
    expect(segments(path)).toEqual([segmentName(2)]);
    expect(statSync(join(path, segmentName(2))).mode & 0o777).toBe(0o600);
  });

  it("a state directory that already existed wider (made by hand, restored from a backup) is narrowed to 0700", () => {
    const path = dir();
    mkdirSync(path, { mode: 0o755 });
    open(path);
    expect(statSync(path).mode & 0o777).toBe(0o700);
  });

  it("a torn tail (a record cut short by a crash) is reported and skipped; the records before it are kept", async () => {
    const path = dir();
    const file = await segmentOfFiveRecords(path);
    truncateSync(file, statSync(file).size - 3);
    leaveLockAsCrashed(path);
    const problems: SegmentProblem[] = [];
    const { replayed } = open(path, { problems });
    expect(replayed).toHaveLength(4);
    expect(problems).toHaveLength(1);
    expect(problems[0]?.problem).toMatch(
      /^truncated record at byte \d+; \d+ bytes skipped — the records before it were recovered, the rest skipped$/,
    );
    // What a crash cuts short was never acknowledged: nothing is kept of it.
    expect(readdirSync(path).filter((name) => name.startsWith("journal-"))).toEqual([segmentName(2)]);
  });

  it("a segment is grown a step ahead of its records, in zeros; a start reads every record and says nothing of the zeros", async () => {
    const path = dir();
    const file = await grownSegmentOfFiveRecords(path);
    const end = recordsEnd(file);
    const data = readFileSync(file);
    expect(data.length).toBe(end + GROWTH_BYTES);
    expect(data.subarray(end).every((byte) => byte === 0)).toBe(true);
    expect(reopen(path)).toEqual({ replayed: fiveRecords, problems: [], files: [segmentName(2)] });
  });

  it("zeros after the last whole record of a segment not grown (the file grew before a power cut, its data never reached the disk) are no problem either", async () => {
    const path = dir();
    const file = await segmentOfFiveRecords(path);
    appendFileSync(file, Buffer.alloc(300));
    expect(reopen(path)).toEqual({ replayed: fiveRecords, problems: [], files: [segmentName(2)] });
  });

  it("a record cut short in the grown space (its start on the disk, zeros after) is a torn tail, of the record's bytes only", async () => {
    const path = dir();
    const file = await grownSegmentOfFiveRecords(path);
    const end = recordsEnd(file);
    const cut = encodeRecord({ t: "s", k: "k5", at: 5 });
    const data = readFileSync(file);
    cut.copy(data, end, 0, cut.length - 7);
    writeFileSync(file, data);
    leaveLockAsCrashed(path);
    const problems: SegmentProblem[] = [];
    const { replayed } = open(path, { problems });
    expect(replayed).toEqual(fiveRecords);
    expect(problems.map((p) => p.problem)).toEqual([
      `truncated record at byte ${end}; ${cut.length} bytes skipped — the records before it were recovered, the rest skipped`,
    ]);
    // A crash's tail: nothing to inspect, the old segment is removed.
    expect(readdirSync(path).filter((name) => name.startsWith("journal-"))).toEqual([segmentName(2)]);
  });

  it("a whole last record damaged on the disk (a flipped bit), with the grown space's zeros after it, is damage kept aside", async () => {
    const path = dir();
    const file = await grownSegmentOfFiveRecords(path);
    const end = recordsEnd(file);
    const last = end - encodeRecord({ t: "s", k: "k4", at: 4 }).length;
    const data = readFileSync(file);
    data[last + HEADER_BYTES + 3] = (data[last + HEADER_BYTES + 3] as number) ^ 0x01;
    writeFileSync(file, data);
    leaveLockAsCrashed(path);
    const problems: SegmentProblem[] = [];
    const { replayed } = open(path, { problems });
    expect(replayed).toEqual(fiveRecords.slice(0, 4));
    const kept = readdirSync(path).find((name) => name.startsWith(`${segmentName(1)}.damaged-`));
    expect(problems.map((p) => p.problem)).toEqual([
      `CRC mismatch at byte ${last}; ${end - last} bytes skipped — the records before it were recovered, the rest skipped; the segment is kept as ${kept} (what was skipped is in it: inspect it as docs/durability.md shows, then delete it)`,
    ]);
  });

  it("an empty segment with none before it (truncated by hand, or its data lost) is reported once, naming it: a segment always starts with a snapshot", async () => {
    const path = dir();
    const file = await segmentOfFiveRecords(path);
    truncateSync(file, 0);
    leaveLockAsCrashed(path);
    const problems: SegmentProblem[] = [];
    const { replayed } = open(path, { problems });
    expect(replayed).toEqual([]);
    expect(problems).toEqual([
      {
        file,
        problem:
          "is empty (0 bytes), though every segment starts with a snapshot: what it held is lost (the file was truncated, or the file system lost its data), unless the very first start in this directory was cut short before its snapshot reached the disk; nothing was replayed from it",
      },
    ]);
    // The next start finds the new segment's snapshot: said once.
    leaveLockAsCrashed(path);
    const again: SegmentProblem[] = [];
    open(path, { problems: again });
    expect(again).toEqual([]);
  });

  it("a segment of zero bytes only with none before it (its data lost in a power cut) is reported as lost, not as a torn tail with records before it", async () => {
    const path = dir();
    const file = await segmentOfFiveRecords(path);
    const size = statSync(file).size;
    writeFileSync(file, Buffer.alloc(size));
    leaveLockAsCrashed(path);
    const problems: SegmentProblem[] = [];
    const { replayed } = open(path, { problems });
    expect(replayed).toEqual([]);
    expect(problems).toEqual([
      {
        file,
        problem: `holds only zero bytes (${size} bytes), though every segment starts with a snapshot: what it held is lost (the file system lost its data, as a power cut can), unless the very first start in this directory was cut short before its snapshot reached the disk; nothing was replayed from it`,
      },
    ]);
  });

  it("a segment of zero bytes only after an older one (a start cut short before its snapshot reached the disk) is no problem: the older one holds it all", async () => {
    const path = dir();
    await segmentOfFiveRecords(path);
    writeFileSync(join(path, segmentName(2)), Buffer.alloc(4096));
    leaveLockAsCrashed(path);
    const problems: SegmentProblem[] = [];
    const { replayed } = open(path, { problems });
    expect(replayed).toEqual([0, 1, 2, 3, 4].map((i) => ({ t: "s", k: `k${i}`, at: i })));
    expect(problems).toEqual([]);
  });

  it("an empty segment after an older one (a start cut short before its snapshot reached the disk) is no problem: the older one holds it all", async () => {
    const path = dir();
    await segmentOfFiveRecords(path);
    writeFileSync(join(path, segmentName(2)), "");
    leaveLockAsCrashed(path);
    const problems: SegmentProblem[] = [];
    const { replayed } = open(path, { problems });
    expect(replayed).toEqual([0, 1, 2, 3, 4].map((i) => ({ t: "s", k: `k${i}`, at: i })));
    expect(problems).toEqual([]);
  });

  it("a last record whose end is zeros (its first page reached the disk, the rest of the file only grew) is a torn tail", async () => {
    const path = dir();
    const file = await segmentOfFiveRecords(path);
    const data = readFileSync(file);
    const last = data.length - encodeRecord({ t: "s", k: "k4", at: 4 }).length;
    data.fill(0, data.length - 6);
    writeFileSync(file, Buffer.concat([data, Buffer.alloc(200)]));
    leaveLockAsCrashed(path);
    const problems: SegmentProblem[] = [];
    const { replayed } = open(path, { problems });
    expect(replayed).toEqual([0, 1, 2, 3].map((i) => ({ t: "s", k: `k${i}`, at: i })));
    expect(problems.map((p) => p.problem)).toEqual([
      // The record's own bytes: the zeros after it are no record.
      `truncated record at byte ${last}; ${data.length - last} bytes skipped — the records before it were recovered, the rest skipped`,
    ]);
    expect(readdirSync(path).filter((name) => name.startsWith("journal-"))).toEqual([segmentName(2)]);
  });

  it("a segment unreadable from its first byte (its first 4 KiB lost to garbage whose length points into the grown zeros) is damage kept aside, said as lost: no torn tail with records before it", async () => {
    const path = dir();
    const file = await grownSegmentOfFiveRecords(path);
    const data = readFileSync(file);
    // A bad block, or a write lost under it: garbage over every record, its first length 1 MiB (0x100000).
    Buffer.alloc(4096, 0xa5).copy(data);
    data.writeUInt32LE(0x100000, 0);
    writeFileSync(file, data);
    const { replayed, problems, files } = reopen(path);
    expect(replayed).toEqual([]);
    const kept = files.find((name) => name.startsWith(`${segmentName(1)}.damaged-`)) as string;
    // The garbage's 4096 bytes, not the megabyte of zeros grown ahead that its length reaches into.
    expect(problems).toEqual([
      `no record of it could be read (CRC mismatch at byte 0; 4096 bytes skipped), though every segment starts with a snapshot: what it held is lost (the runs it owed do not run, its coalescing groups do not fire, and the delivery ids it remembered are forgotten: a sender's retry of one is taken as new); nothing was replayed from it; the segment is kept as ${kept} (inspect it as docs/durability.md shows, then delete it)`,
    ]);
    expect(files.sort()).toEqual([kept, segmentName(2)]);
    expect(readFileSync(join(path, kept)).equals(data)).toBe(true);
    expect(statSync(join(path, kept)).mode & 0o777).toBe(0o600);
    // Said once: the next start reads the new segment only.
    expect(reopen(path).problems).toEqual([]);
  });

  it("a segment of garbage whose first length points past its end (not grown: nothing after its records) is damage too, not a record a crash cut short", async () => {
    const path = dir();
    const file = await segmentOfFiveRecords(path);
    const data = readFileSync(file).fill(0xa5);
    data.writeUInt32LE(data.length, 0);
    writeFileSync(file, data);
    const { replayed, problems, files } = reopen(path);
    expect(replayed).toEqual([]);
    const kept = files.find((name) => name.startsWith(`${segmentName(1)}.damaged-`)) as string;
    expect(problems).toEqual([
      `no record of it could be read (truncated record at byte 0; ${data.length} bytes skipped), though every segment starts with a snapshot: what it held is lost (the runs it owed do not run, its coalescing groups do not fire, and the delivery ids it remembered are forgotten: a sender's retry of one is taken as new); nothing was replayed from it; the segment is kept as ${kept} (inspect it as docs/durability.md shows, then delete it)`,
    ]);
    expect(readFileSync(join(path, kept)).equals(data)).toBe(true);
  });

  it("a later segment unreadable from its first byte: the older one is used, and the damaged one kept aside, not removed", async () => {
    const path = dir();
    await segmentOfFiveRecords(path);
    const garbage = Buffer.alloc(600, 0x5a);
    garbage.writeUInt32LE(0x100000, 0);
    writeFileSync(join(path, segmentName(2)), Buffer.concat([garbage, Buffer.alloc(4096)]));
    const { replayed, problems, files } = reopen(path);
    expect(replayed).toEqual(fiveRecords);
    const kept = files.find((name) => name.startsWith(`${segmentName(2)}.damaged-`)) as string;
    expect(problems).toEqual([
      `no record of it could be read (truncated record at byte 0; 600 bytes skipped), though every segment starts with a snapshot: nothing was replayed from it; the segments before it are, and what was appended to it alone is lost (nothing, if it was a file put there that was never a segment of this journal); the segment is kept as ${kept} (inspect it as docs/durability.md shows, then delete it)`,
    ]);
    expect(files.sort()).toEqual([kept, segmentName(3)]);
  });

  it("a segment whose first record is intact but no snapshot (edited, or its start lost) is replayed as it is and kept aside", async () => {
    const path = dir();
    const file = await segmentOfFiveRecords(path);
    const data = readFileSync(file);
    const snapshot = emptySnapshotBytes(path);
    writeFileSync(file, data.subarray(snapshot));
    const { replayed, problems, files } = reopen(path);
    expect(replayed).toEqual(fiveRecords);
    const kept = files.find((name) => name.startsWith(`${segmentName(1)}.damaged-`)) as string;
    expect(problems).toEqual([
      `it does not start with a snapshot, though every segment does (it was edited, or its start was lost): its records were replayed as they are; the segment is kept as ${kept} (inspect it as docs/durability.md shows, then delete it)`,
    ]);
  });

  it("a record whose CRC does not match is skipped, the records after it are replayed, and the segment is kept aside, named in the report", async () => {
    const path = dir();
    const file = await segmentOfFiveRecords(path);
    const data = readFileSync(file);
    // After the (empty) snapshot that starts the segment: a byte inside the third record's body.
    const snapshot = emptySnapshotBytes(path);
    const third = snapshot + encodeRecord({ t: "s", k: "k0", at: 0 }).length * 2 + 8 + 3;
    data[third] = (data[third] as number) ^ 0xff;
    writeFileSync(file, data);
    // Restored from a backup wider than it was written: kept aside owner-only all the same (it holds payloads).
    chmodSync(file, 0o644);
    leaveLockAsCrashed(path);
    const problems: SegmentProblem[] = [];
    const { replayed } = open(path, { problems });
    expect(replayed).toEqual([0, 1, 3, 4].map((i) => ({ t: "s", k: `k${i}`, at: i })));
    expect(problems).toHaveLength(1);
    expect(problems[0]?.file).toBe(file);
    const kept = readdirSync(path).find((name) => name.startsWith(`${segmentName(1)}.damaged-`)) as string;
    expect(problems[0]?.problem).toBe(
      `CRC mismatch at byte ${third - 8 - 3}; ${encodeRecord({ t: "s", k: "k2", at: 2 }).length} bytes skipped, the records after it recovered; the segment is kept as ${kept} (what was skipped is in it: inspect it as docs/durability.md shows, then delete it)`,
    );
    // Kept byte for byte; not read again by the next start.
    expect(readFileSync(join(path, kept))).toEqual(data);
    expect(statSync(join(path, kept)).mode & 0o777).toBe(0o600);
    leaveLockAsCrashed(path);
    const again: SegmentProblem[] = [];
    open(path, { problems: again });
    expect(again).toEqual([]);
    expect(readFileSync(join(path, kept))).toEqual(data);
  });

  it("a damaged snapshot start: its records are replayed, and its end mark is not replayed as a record", async () => {
    const path = dir();
    const { journal } = open(path);
    for (let i = 0; i < 3; i++) journal.append({ t: "s", k: `k${i}`, at: i });
    await journal.durable();
    leaveLockAsCrashed(path);
    open(path, { live: [0, 1].map((i) => ({ t: "s", k: `k${i}`, at: i })) });
    const file = join(path, segmentName(2));
    const data = readFileSync(file);
    data[HEADER_BYTES + 2] = (data[HEADER_BYTES + 2] as number) ^ 0xff; // inside the snap mark's body
    writeFileSync(file, data);
    leaveLockAsCrashed(path);
    const problems: SegmentProblem[] = [];
    const { replayed } = open(path, { problems });
    expect(replayed).toEqual([0, 1].map((i) => ({ t: "s", k: `k${i}`, at: i })));
    expect(problems[0]?.problem).toMatch(/^CRC mismatch at byte 0; /);
  });

  it("a damaged snapshot end in the only segment: the records read from it are replayed, not dropped", async () => {
    const path = dir();
    const { journal } = open(path);
    for (let i = 0; i < 3; i++) journal.append({ t: "s", k: `k${i}`, at: i });
    await journal.durable();
    leaveLockAsCrashed(path);
    // The restart restates the three in a snapshot: journal-000002.seg is the only segment.
    open(path, { live: [0, 1, 2].map((i) => ({ t: "s", k: `k${i}`, at: i })) });
    const file = join(path, segmentName(2));
    const data = readFileSync(file);
    // Truncated where the snapshot's end mark begins (the disk lost the end of the file).
    writeFileSync(file, data.subarray(0, data.length - encodeRecord({ t: "snap-end" }).length + 2));
    leaveLockAsCrashed(path);
    const problems: SegmentProblem[] = [];
    const { replayed } = open(path, { problems });
    expect(replayed).toEqual([0, 1, 2].map((i) => ({ t: "s", k: `k${i}`, at: i })));
    expect(problems.map((p) => p.problem)).toContain(
      "its snapshot has no end and no segment precedes it; the 3 record(s) read from it are used",
    );
  });

  it("records this version cannot read (a newer version's) are skipped and their segment kept aside, never removed", async () => {
    const path = dir();
    const { journal } = open(path);
    journal.append({ t: "s", k: "known", at: 1 });
    journal.append({ t: "zz", k: "from a newer version" });
    await journal.durable();
    leaveLockAsCrashed(path);
    const problems: SegmentProblem[] = [];
    const understood = (record: unknown) => (record as { t?: unknown }).t === "s";
    const { replayed } = open(path, { problems, understood });
    expect(replayed).toEqual([{ t: "s", k: "known", at: 1 }]);
    expect(problems[0]?.problem).toMatch(
      /^1 record\(s\) this version of svc cannot read \(written by a newer version, or edited by hand\) skipped; the segment is kept as journal-000001\.seg\.damaged-\d+ /,
    );
    expect(readdirSync(path).filter((name) => name.startsWith("journal-"))).toHaveLength(2);
  });

  it("a segment that cannot be read stops the open, naming it, and is left in place", () => {
    const path = dir();
    open(path);
    leaveLockAsCrashed(path);
    // A file no buffer can take whole (sparse: no disk used); as root, EACCES is no refusal to test with.
    const file = join(path, segmentName(5));
    writeFileSync(file, "");
    truncateSync(file, constants.MAX_LENGTH + 1);
    expect(() => open(path)).toThrow(
      `${file} cannot be read (it holds ${constants.MAX_LENGTH + 1} bytes, more than one buffer takes`,
    );
    expect(
      readdirSync(path)
        .filter((name) => name.startsWith("journal-"))
        .sort(),
    ).toEqual([segmentName(1), segmentName(5)]);
  });

  it("a garbage record header whose last byte is zero (length 0xfffffff0, CRC 0) is damage kept aside, not a torn tail", async () => {
    const path = dir();
    const file = await segmentOfFiveRecords(path);
    const size = statSync(file).size;
    // No record is that long, and zeros a crash leaves only shorten a length: not a record cut short.
    const garbage = Buffer.from([0xf0, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
    appendFileSync(file, garbage);
    leaveLockAsCrashed(path);
    const problems: SegmentProblem[] = [];
    const { replayed } = open(path, { problems });
    expect(replayed).toEqual([0, 1, 2, 3, 4].map((i) => ({ t: "s", k: `k${i}`, at: i })));
    const kept = readdirSync(path).find((name) => name.startsWith(`${segmentName(1)}.damaged-`));
    expect(problems.map((p) => p.problem)).toEqual([
      `bad length at byte ${size}; 8 bytes skipped — the records before it were recovered, the rest skipped; the segment is kept as ${kept} (what was skipped is in it: inspect it as docs/durability.md shows, then delete it)`,
    ]);
    expect(readFileSync(join(path, kept as string)).subarray(size)).toEqual(garbage);
  });

  it("garbage appended to a segment is reported and never stops the open", () => {
    const path = dir();
    open(path);
    appendFileSync(join(path, segmentName(1)), Buffer.from([0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4, 5, 6]));
    leaveLockAsCrashed(path);
    const problems: SegmentProblem[] = [];
    expect(() => open(path, { problems })).not.toThrow();
    expect(problems[0]?.problem).toMatch(/^bad length/);
  });
});
