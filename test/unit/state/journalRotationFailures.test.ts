import { describe, expect, it } from "vitest";
import { type JournalFs, nodeJournalFs } from "../../../src/io/state/journal/fsFacade.js";
import { RotationFailed, RotationLeftSegment } from "../../../src/io/state/journal/rotation.js";
import { readJournal, segmentName } from "../../../src/io/state/journal/segments.js";
import { journalErrorLine } from "../../../src/state/gatewayState.js";
import {
  appendAll,
  cleanUpJournals,
  crashImages,
  journalDir as dir,
  journalFiles,
  keyed,
  openJournal as open,
  recordKey,
} from "../../helpers/journal.js";

cleanUpJournals();

/** node:fs whose `call` fails the first `times` times it is made. */
function failingFs(call: "link" | "syncDir", times: number, message: string): JournalFs {
  let left = times;
  const fail = () => left-- > 0;
  return {
    ...nodeJournalFs,
    ...(call === "link"
      ? {
          link: (from: string, to: string) =>
            fail() ? Promise.reject(new Error(message)) : nodeJournalFs.link(from, to),
        }
      : {
          syncDir: (where: string) =>
            fail() ? Promise.reject(new Error(message)) : nodeJournalFs.syncDir(where),
        }),
  };
}

/** Appends rounds of five ~90-byte records until `done()` or 40 rounds; returns the rounds made. */
async function appendUntil(journal: Parameters<typeof appendAll>[0], done: () => boolean): Promise<number> {
  let round = 0;
  for (; round < 40 && !done(); round++) await appendAll(journal, keyed(`more-${round}`, 5, 40));
  return round;
}

describe("a rotation that fails", () => {
  it("leaves the current segment in use and nothing behind; the error is reported and appends stay durable", async () => {
    const path = dir();
    const errors: unknown[] = [];
    const live = [{ t: "s", k: "live", at: 0 }];
    const fs = failingFs("link", 1, "EIO: link failed");
    const { journal } = open(path, { fs, maxSegmentBytes: 4096, live, errors });
    await appendAll(journal, keyed("first", 60, 40));
    await journal.rotated();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(RotationFailed);
    expect((errors[0] as RotationFailed).message).toBe("rotating the journal failed (EIO: link failed)");
    expect(journal.currentSegment().n).toBe(1);
    expect(journalFiles(path)).toEqual([segmentName(1)]);

    // It is not retried at every flush, only once the segment grew by a quarter of its size again.
    await appendAll(journal, keyed("second", 2, 40));
    await journal.rotated();
    expect(journal.currentSegment().n).toBe(1);
    await appendUntil(journal, () => journal.currentSegment().n > 1);
    await journal.rotated();
    expect(journal.currentSegment().n).toBe(2);
    expect(errors).toHaveLength(1);

    // The log tells it apart from a failed write (which answers 503) and names the cause.
    const line = journalErrorLine(path, errors[0]);
    expect(line.cause).toContain("EIO: link failed");
    expect(line.message).toContain(
      `rotating the journal in ${path} failed; the current segment keeps every record`,
    );
    expect(journalErrorLine(path, new Error("ENOSPC")).message).toBe(
      `[state] writing the journal in ${path} failed; the requests waiting for it answer 503 (their senders retry), as do later ones while writes fail (said once until a write succeeds again) — check the disk has room and the directory is writable`,
    );
  });

  it("does not raise the size at which later segments rotate once a rotation succeeded", async () => {
    const rotationsOver = async (fs: JournalFs) => {
      const { journal } = open(dir(), { fs, maxSegmentBytes: 4096 });
      // ~2.2 KB a round: a rotation every second round at 4 KB; every third, were the threshold raised.
      for (let round = 0; round < 30; round++) {
        await appendAll(journal, keyed(`r${round}`, 25, 40));
        await journal.rotated();
      }
      return journal.currentSegment().n - 1;
    };
    const control = await rotationsOver(nodeJournalFs);
    const afterOneFailure = await rotationsOver(failingFs("link", 1, "EIO: link failed"));
    expect(control).toBeGreaterThanOrEqual(8);
    // One rotation is lost to the failure and its quarter of waiting; the rest come as often as without it.
    expect(afterOneFailure).toBeGreaterThanOrEqual(control - 2);
  });

  it("after it named its segment (the directory sync fails): the new segment is removed before any append goes on, so a crash at any point loses no acknowledged record", async () => {
    const path = dir();
    const errors: unknown[] = [];
    const crash = crashImages(path, failingFs("syncDir", 1, "EIO: fsync(dir) failed"));
    // Everything appended stays live, so every image must hold every record acknowledged before it.
    const live = new Map<string, unknown>();
    const { journal } = open(path, {
      fs: crash.fs,
      maxSegmentBytes: 4096,
      errors,
      live: () => live.values(),
    });
    for (let round = 0; round < 25; round++) {
      const records = keyed(`r${round}`, 5, 40);
      for (const record of records) live.set(record.k, record);
      await appendAll(journal, records);
      crash.acknowledged = round + 1;
    }
    await journal.rotated();
    expect(errors.map((err) => (err as Error).message)).toEqual([
      "rotating the journal failed (EIO: fsync(dir) failed)",
    ]);
    // The images caught the failed commit's named segment, and a later rotation that succeeded.
    expect(crash.images.some((shot) => shot.files.length === 2 && shot.files.includes(segmentName(2)))).toBe(
      true,
    );
    expect(journal.currentSegment().n).toBeGreaterThan(1);
    for (const shot of crash.images) {
      const keys = new Set(readJournal(shot.dir).records.map(recordKey));
      const expected = Array.from({ length: shot.acknowledged }, (_, round) =>
        keyed(`r${round}`, 5).map(recordKey),
      ).flat();
      expect(
        expected.filter((k) => !keys.has(k)),
        `${shot.files}`,
      ).toEqual([]);
    }
  });

  it("and whose new segment cannot be removed either: from then on appends are refused, not acknowledged where a restart would not look", async () => {
    const path = dir();
    const errors: unknown[] = [];
    const fs = failingFs("syncDir", 2, "EIO: fsync(dir) failed");
    const { journal } = open(path, { fs, maxSegmentBytes: 4096, errors });
    await appendAll(journal, keyed("first", 60, 40));
    await journal.rotated();
    const left = errors.find((err) => err instanceof RotationLeftSegment) as RotationLeftSegment;
    expect(left).toBeDefined();
    journal.append({ t: "s", k: "after", at: 1 });
    await expect(journal.durable()).rejects.toBe(left);
    expect(journalErrorLine(path, left).message).toContain("requests answer 503 from now on");
  });
});

describe("a write that fails part way", () => {
  it("is cut back, so the batches after it can be read", async () => {
    const path = dir();
    let failNext = false;
    const fs: JournalFs = {
      ...nodeJournalFs,
      async write(fd, data, position) {
        if (!failNext) return nodeJournalFs.write(fd, data, position);
        failNext = false;
        await nodeJournalFs.write(fd, data.subarray(0, Math.floor(data.length / 2)), position);
        throw new Error("ENOSPC: no space left on device");
      },
    };
    const { journal } = open(path, { fs });
    await appendAll(journal, keyed("before", 2));
    failNext = true;
    journal.append({ t: "s", k: "torn", at: 1 });
    await expect(journal.durable()).rejects.toThrow("ENOSPC");
    await appendAll(journal, keyed("after", 2));
    const read = readJournal(path);
    expect(read.problems).toEqual([]);
    expect(read.records.map(recordKey)).toEqual(["before-0", "before-1", "after-0", "after-1"]);
  });
});
