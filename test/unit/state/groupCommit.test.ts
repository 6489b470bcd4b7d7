import { closeSync, openSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type JournalFs, nodeJournalFs } from "../../../src/io/state/journal/fsFacade.js";
import {
  GROWTH_BYTES,
  GroupCommitWriter,
  RecordsNotWritten,
} from "../../../src/io/state/journal/groupCommit.js";
import { decodeRecords } from "../../../src/io/state/journal/records.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { diskWithRoom, fillableDisk } from "../../helpers/journal.js";

let home: TempHome | undefined;
const fds: number[] = [];
afterEach(() => {
  for (const fd of fds.splice(0)) closeSync(fd);
  home?.cleanup();
});

/** node:fs whose syncs each wait until the test ends them, one by one, in any order. */
function heldSyncs() {
  const syncs: Array<{ end: () => void; fail: (err: Error) => void }> = [];
  const fs: JournalFs = {
    ...nodeJournalFs,
    fdatasync: (fd) =>
      new Promise((resolve, reject) => {
        syncs.push({ end: () => void nodeJournalFs.fdatasync(fd).then(resolve, reject), fail: reject });
      }),
  };
  return { fs, syncs };
}

function writer(fs: JournalFs) {
  home = tempHome();
  const path = join(home.dir, "journal.seg");
  // As the journal opens a segment: not for appending (its writes name their position).
  const fd = openSync(path, "w", 0o600);
  fds.push(fd);
  const flushed: string[][] = [];
  const errors: unknown[] = [];
  const keys = (data: Buffer) => decodeRecords(data).records.map((r) => (r as { k: string }).k);
  const commit = new GroupCommitWriter(fd, {
    fs,
    onFlushed: (data) => flushed.push(keys(data)),
    onError: (err) => errors.push(err),
  });
  return { commit, flushed, errors, fileKeys: () => keys(readFileSync(path)), path };
}

/** Appends one record in a turn of its own and waits until its batch's sync has begun. */
async function appendAlone(commit: GroupCommitWriter, k: string, syncs: unknown[], expectSyncs: number) {
  commit.append({ t: "s", k, at: 1 });
  const durable = commit.durable() as Promise<void>;
  await vi.waitFor(() => expect(syncs).toHaveLength(expectSyncs), { timeout: 2000, interval: 1 });
  // Wrapped: an async function returning the promise itself would wait for it.
  return { durable };
}

describe("group commit with syncs in flight at once", () => {
  it("a later sync that ends first releases the batches written before it too, in the order of the file", async () => {
    const { fs, syncs } = heldSyncs();
    const { commit, flushed, fileKeys } = writer(fs);
    const released: string[] = [];
    for (const [i, k] of ["a", "b", "c"].entries())
      void (await appendAlone(commit, k, syncs, i + 1)).durable.then(() => released.push(k));
    expect(fileKeys()).toEqual(["a", "b", "c"]);
    syncs[1]?.end();
    await vi.waitFor(() => expect(released).toEqual(["a", "b"]), { timeout: 2000, interval: 1 });
    expect(flushed).toEqual([["a"], ["b"]]);
    syncs[0]?.end();
    syncs[2]?.end();
    await vi.waitFor(() => expect(released).toEqual(["a", "b", "c"]), { timeout: 2000, interval: 1 });
    expect(flushed).toEqual([["a"], ["b"], ["c"]]);
    expect(commit.durable()).toBeUndefined();
  });

  it("a failed sync answers only its own batch; one a later sync already released stays released", async () => {
    const { fs, syncs } = heldSyncs();
    const { commit, flushed, errors } = writer(fs);
    const outcome: Record<string, string> = {};
    const track = (k: string, p: Promise<void>) =>
      p.then(
        () => {
          outcome[k] = "durable";
        },
        (err: Error) => {
          outcome[k] = err.message;
        },
      );
    track("a", (await appendAlone(commit, "a", syncs, 1)).durable);
    track("b", (await appendAlone(commit, "b", syncs, 2)).durable);
    track("c", (await appendAlone(commit, "c", syncs, 3)).durable);
    syncs[1]?.fail(new Error("EIO b"));
    await vi.waitFor(() => expect(outcome).toEqual({ b: "EIO b" }), { timeout: 2000, interval: 1 });
    syncs[2]?.end();
    await vi.waitFor(() => expect(outcome).toEqual({ a: "durable", b: "EIO b", c: "durable" }), {
      timeout: 2000,
      interval: 1,
    });
    // "a" was released by the sync of "c", begun after its write: its own failing later changes nothing.
    syncs[0]?.fail(new Error("EIO a"));
    await new Promise((resolve) => setImmediate(resolve));
    expect(outcome.a).toBe("durable");
    // Every sync so far began before the failure of "b": the outage is not over, and "a" is a part of it.
    expect(errors.map((e) => (e as Error).message)).toEqual(["EIO b"]);
    expect(commit.accepting()).toBe(false);
    expect(flushed).toEqual([["a"], ["c"]]);
  });

  it("an exclusive task waits for every sync in flight, and goes before the batch that waits", async () => {
    const { fs, syncs } = heldSyncs();
    const { commit, fileKeys } = writer(fs);
    const order: string[] = [];
    void (await appendAlone(commit, "a", syncs, 1)).durable.then(() => order.push("a durable"));
    void (await appendAlone(commit, "b", syncs, 2)).durable.then(() => order.push("b durable"));
    const task = commit.exclusive(async () => {
      order.push(`task sees ${fileKeys().join("")}`);
    });
    commit.append({ t: "s", k: "c", at: 1 });
    void commit.durable()?.then(() => order.push("c durable"));
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual([]);
    syncs[0]?.end();
    await vi.waitFor(() => expect(order).toEqual(["a durable"]), { timeout: 2000, interval: 1 });
    syncs[1]?.end();
    await task;
    expect(order).toEqual(["a durable", "b durable", "task sees ab"]);
    await vi.waitFor(() => expect(syncs).toHaveLength(3), { timeout: 2000, interval: 1 });
    syncs[2]?.end();
    await vi.waitFor(() => expect(order.at(-1)).toBe("c durable"), { timeout: 2000, interval: 1 });
  });

  it("exclusive tasks run one at a time, in the order asked", async () => {
    const { commit } = writer(nodeJournalFs);
    const log: string[] = [];
    let release: () => void = () => {};
    const first = commit.exclusive(async () => {
      log.push("first starts");
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      log.push("first ends");
    });
    const second = commit.exclusive(async () => {
      log.push("second starts");
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(log).toEqual(["first starts"]);
    release();
    await Promise.all([first, second]);
    expect(log).toEqual(["first starts", "first ends", "second starts"]);
  });

  it("durable() while a batch is being written waits for that batch", async () => {
    let endWrite: () => void = () => {};
    let writes = 0;
    const fs: JournalFs = {
      ...nodeJournalFs,
      write: async (fd, data, position) => {
        writes += 1;
        await new Promise<void>((resolve) => {
          endWrite = resolve;
        });
        return nodeJournalFs.write(fd, data, position);
      },
    };
    const { commit, fileKeys } = writer(fs);
    commit.append({ t: "s", k: "a", at: 1 });
    await vi.waitFor(() => expect(writes).toBe(1), { timeout: 2000, interval: 1 });
    const waiting = commit.durable();
    expect(waiting).toBeInstanceOf(Promise);
    endWrite();
    await waiting;
    expect(fileKeys()).toEqual(["a"]);
  });
});

describe("group commit on a disk that stays full", () => {
  it("reports the first failed write of an outage only, and the next one after a sync succeeded", async () => {
    const { fs, disk } = fillableDisk(nodeJournalFs, true);
    const { commit, errors } = writer(fs);
    const rejected: string[] = [];
    // One batch per turn of the loop, as requests retried one after another make them.
    for (const k of ["a", "b", "c"]) {
      commit.append({ t: "s", k, at: 1 });
      await (commit.durable() as Promise<void>).catch((err: Error) => rejected.push(`${k} ${err.message}`));
    }
    expect(rejected).toHaveLength(3);
    expect(errors.map((e) => (e as Error).message)).toEqual(["ENOSPC: no space left on device"]);
    disk.full = false;
    commit.append({ t: "s", k: "d", at: 1 });
    await commit.durable();
    disk.full = true;
    commit.append({ t: "s", k: "e", at: 1 });
    await (commit.durable() as Promise<void>).catch(() => {});
    expect(errors).toHaveLength(2);
  });
});

describe("whether the writer is making records durable (svc_state_available)", () => {
  it("is false from a failed write until a sync succeeds again, also when the write's piece could not be cut back at once", async () => {
    const { fs: fillable, disk } = fillableDisk();
    let truncateFails = false;
    const fs: JournalFs = {
      ...fillable,
      truncate: (fd, length) =>
        truncateFails ? Promise.reject(new Error("EIO: i/o error")) : nodeJournalFs.truncate(fd, length),
    };
    const { commit } = writer(fs);
    const record = async (k: string) => {
      commit.append({ t: "s", k, at: 1 });
      await (commit.durable() as Promise<void>).catch(() => {});
    };
    await record("a");
    expect(commit.accepting()).toBe(true);
    disk.full = true;
    await record("b");
    expect(commit.accepting()).toBe(false);
    disk.full = false;
    await record("c");
    expect(commit.accepting()).toBe(true);
    disk.full = true;
    truncateFails = true;
    await record("d");
    disk.full = false;
    // The piece the failed write may have left is not cut back: no batch is written behind it, where a
    // start could read the refused records in it.
    commit.append({ t: "s", k: "e", at: 1 });
    await expect(commit.durable()).rejects.toBeInstanceOf(RecordsNotWritten);
    expect(commit.accepting()).toBe(false);
    // Once the cut-back tried before the next write succeeds, records are taken again: no restart needed.
    truncateFails = false;
    await record("f");
    expect(commit.accepting()).toBe(true);
  });

  it("stays false when a sync begun before the failed write ends after it: only a later sync ends the outage", async () => {
    const { fs: held, syncs } = heldSyncs();
    const { fs, disk } = fillableDisk(held, false);
    const { commit, errors } = writer(fs);
    const a = (await appendAlone(commit, "a", syncs, 1)).durable;
    disk.full = true;
    commit.append({ t: "s", k: "b", at: 1 });
    await expect(commit.durable()).rejects.toThrow("ENOSPC");
    expect(commit.accepting()).toBe(false);
    syncs[0]?.end();
    await a;
    expect(commit.accepting()).toBe(false);
    disk.full = false;
    const c = (await appendAlone(commit, "c", syncs, 2)).durable;
    expect(commit.accepting()).toBe(false);
    syncs[1]?.end();
    await c;
    expect(commit.accepting()).toBe(true);
    expect(errors).toHaveLength(1);
  });
});

describe("the space a segment is grown into ahead of its records", () => {
  /** Appends `k` with `pad` characters of padding and waits until it is durable. */
  const record = async (commit: GroupCommitWriter, k: string, pad = 0) => {
    commit.append({ t: "s", k, at: 1, pad: "x".repeat(pad) });
    await commit.durable();
  };

  it("is a step of zeros past the records, grown again once less than half a step is left; the batches are written into it in order", async () => {
    const { commit, path, fileKeys } = writer(nodeJournalFs);
    await record(commit, "a");
    expect(statSync(path).size).toBe(commit.fileBytes() + GROWTH_BYTES);
    // Past half a step of records: the next flush grows the file a step past them.
    const pad = GROWTH_BYTES / 8;
    for (const k of ["b", "c", "d", "e"]) await record(commit, k, pad);
    expect(commit.fileBytes()).toBeGreaterThan(GROWTH_BYTES / 2);
    expect(statSync(path).size).toBe(commit.fileBytes() + GROWTH_BYTES);
    const data = readFileSync(path);
    expect(data.subarray(commit.fileBytes()).every((byte) => byte === 0)).toBe(true);
    expect(decodeRecords(data)).toEqual(expect.objectContaining({ skipped: [], unused: GROWTH_BYTES }));
    expect(fileKeys()).toEqual(["a", "b", "c", "d", "e"]);
  });

  it("a growth that fails (a full disk) costs only speed: the batches are written past the file's end and are durable", async () => {
    let grows = 0;
    const fs: JournalFs = {
      ...nodeJournalFs,
      grow: () => {
        grows += 1;
        return Promise.reject(new Error("ENOSPC: no space left on device"));
      },
    };
    const { commit, path, fileKeys, errors } = writer(fs);
    await record(commit, "a");
    await record(commit, "b");
    expect(statSync(path).size).toBe(commit.fileBytes());
    expect(fileKeys()).toEqual(["a", "b"]);
    expect(errors).toEqual([]);
    expect(commit.accepting()).toBe(true);
    // Tried again half a step on, not at every flush.
    expect(grows).toBe(1);
    await record(commit, "c", GROWTH_BYTES / 2);
    await record(commit, "d");
    expect(grows).toBe(2);
  });

  it("a growth a nearly full disk has room for only part of leaves the file at its records: the disk's last blocks stay free", async () => {
    const room = GROWTH_BYTES / 4;
    const { fs, disk } = diskWithRoom(room);
    const { commit, path, fileKeys, errors } = writer(fs);
    await record(commit, "a");
    // The step's zeros filled the disk up to its last byte, then were cut off again.
    expect(statSync(path).size).toBe(commit.fileBytes());
    expect(disk.room).toBe(room - commit.fileBytes());
    await record(commit, "b");
    expect(statSync(path).size).toBe(commit.fileBytes());
    expect(fileKeys()).toEqual(["a", "b"]);
    expect(errors).toEqual([]);
    expect(commit.accepting()).toBe(true);
  });

  it("a failed write is cut back with the space grown past it; the next batch grows the file again", async () => {
    const { fs, disk } = fillableDisk();
    const { commit, path, fileKeys } = writer(fs);
    await record(commit, "a");
    disk.full = true;
    await expect(record(commit, "b")).rejects.toThrow("ENOSPC");
    expect(statSync(path).size).toBe(commit.fileBytes());
    disk.full = false;
    await record(commit, "c");
    expect(statSync(path).size).toBe(commit.fileBytes() + GROWTH_BYTES);
    expect(fileKeys()).toEqual(["a", "c"]);
  });
});
