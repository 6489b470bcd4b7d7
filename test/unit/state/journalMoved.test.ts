import { existsSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { type JournalFs, nodeJournalFs } from "../../../src/io/state/journal/fsFacade.js";
import { SEGMENT_CHECK_MS } from "../../../src/io/state/journal/journal.js";
import { JournalNotRecreated, RotationLeftSegment } from "../../../src/io/state/journal/rotation.js";
import { readJournal } from "../../../src/io/state/journal/segments.js";
import { journalErrorLine } from "../../../src/state/gatewayState.js";
import {
  appendAll,
  cleanUpJournals,
  journalDir,
  keyed,
  openJournal,
  recordKey,
  segmentFiles,
} from "../../helpers/journal.js";

/**
 * docs/durability.md, "The state directory removed while the gateway runs": at most once a second a flush
 * looks whether the segment's path still names its file; when it does not, the directory is made again with
 * a new segment restating what is live, and the appends waiting are released once that is durable.
 */

cleanUpJournals();

/** The keys a start reads back (a record in the snapshot and copied behind it too is one fact). */
const keys = (dir: string) => [...new Set(readJournal(dir).records.map(recordKey))].sort();

describe("a journal whose segment's path lost its file", () => {
  it("moved away (mv state state.old): the next look restates what is live in a new segment at the path, and the appends wait for it", async () => {
    const dir = journalDir();
    let now = 0;
    const live: unknown[] = [];
    const { journal } = openJournal(dir, { now: () => now, live: () => [...live] });
    const append = (record: { k: string }) => {
      live.push(record);
      journal.append(record);
    };
    const [a, b, c] = keyed("k", 3);
    append(a as { k: string });
    await journal.durable();

    renameSync(dir, `${dir}.old`);
    // Within the second: not looked yet, synced into the file that moved away.
    append(b as { k: string });
    await journal.durable();
    expect(existsSync(dir)).toBe(false);

    now += SEGMENT_CHECK_MS;
    append(c as { k: string });
    await journal.durable();
    expect(keys(dir)).toEqual(["k-0", "k-1", "k-2"]);
    expect(segmentFiles(dir)).toHaveLength(1);
    expect(journal.accepting()).toBe(true);

    // From then on, the new segment takes the appends.
    const [d] = keyed("d", 1);
    append(d as { k: string });
    await journal.durable();
    expect(keys(dir)).toEqual(["d-0", "k-0", "k-1", "k-2"]);
    rmSync(`${dir}.old`, { recursive: true, force: true });
  });

  it("when the directory cannot be made again, the appends waiting are rejected and the journal is not accepting until a later look succeeds", async () => {
    const dir = journalDir();
    let now = 0;
    const live: unknown[] = [];
    const errors: unknown[] = [];
    const { journal } = openJournal(dir, { now: () => now, live: () => [...live], errors });
    const append = (record: unknown) => {
      live.push(record);
      journal.append(record);
    };
    const [a, b, c] = keyed("k", 3);
    append(a);
    await journal.durable();

    rmSync(dir, { recursive: true, force: true });
    writeFileSync(dir, "not a directory");
    now += SEGMENT_CHECK_MS;
    append(b);
    await expect(journal.durable()).rejects.toThrow();
    const notRecreated = errors.find((err) => err instanceof JournalNotRecreated);
    expect(journalErrorLine(dir, notRecreated).message).toBe(
      `[state] the journal in ${dir} could not be made again after the state directory was removed or moved while the gateway ran: ${dir} is a file, not a directory; the requests waiting for it answer 503 (their senders retry), as do later ones until it can be (tried again each second, said again only if what is in the directory's place changes) — move that file away (the gateway makes the directory)`,
    );
    expect(journal.accepting()).toBe(false);
    // Within the same second nothing is tried again: the next append is refused too.
    append(c);
    await expect(journal.durable()).rejects.toThrow();

    rmSync(dir, { force: true });
    now += SEGMENT_CHECK_MS;
    const [d] = keyed("d", 1);
    append(d);
    await journal.durable();
    expect(journal.accepting()).toBe(true);
    expect(keys(dir)).toEqual(["d-0", "k-0", "k-1", "k-2"]);
  });
});

describe("the state directory removed during a rotation", () => {
  it("the rotation fails without leaving the journal broken, and the next look makes the directory again", async () => {
    const dir = journalDir();
    let now = 0;
    const live: unknown[] = [];
    const errors: unknown[] = [];
    let removeOnName = true;
    const fs: JournalFs = {
      ...nodeJournalFs,
      async link(from, to) {
        if (removeOnName) {
          removeOnName = false;
          rmSync(dir, { recursive: true, force: true });
        }
        return nodeJournalFs.link(from, to);
      },
    };
    const { journal } = openJournal(dir, {
      now: () => now,
      live: () => [...live],
      errors,
      fs,
      maxSegmentBytes: 2048,
    });
    const records = keyed("k", 40, 100);
    for (const record of records) live.push(record);
    await appendAll(journal, records);
    await journal.rotated();
    expect(removeOnName).toBe(false);
    expect(errors.some((err) => err instanceof RotationLeftSegment)).toBe(false);

    now += SEGMENT_CHECK_MS;
    const [d] = keyed("d", 1);
    live.push(d);
    await appendAll(journal, [d]);
    expect(journal.accepting()).toBe(true);
    expect(keys(dir)).toEqual(["d-0", ...records.map(recordKey)].sort());
  });
});
