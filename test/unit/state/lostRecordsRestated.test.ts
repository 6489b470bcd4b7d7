import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type JournalFs, nodeJournalFs } from "../../../src/io/state/journal/fsFacade.js";
import type { PendingRun } from "../../../src/io/stores/pendingRuns.js";
import { journalErrorLine } from "../../../src/state/gatewayState.js";
import { LocalStateStore } from "../../../src/state/localStore.js";
import { leaveLockAsCrashed } from "../../helpers/crashedLock.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

const homes: TempHome[] = [];
const stores: LocalStateStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close().catch(() => {});
  for (const home of homes.splice(0)) home.cleanup();
});

const run = (deliveryId: string): PendingRun => ({
  routeName: "pr",
  profile: "default",
  event: "push",
  deliveryId,
  prompt: "pr",
  extra: {},
  receivedAt: 1000,
});

/**
 * A disk that refuses every write while `full` (ENOSPC), as one filled to its last block does; with `room`,
 * only writes of at most that many bytes (the last block's free end).
 */
function fullDisk() {
  const disk: { full: boolean; room?: number } = { full: false };
  const fs: JournalFs = {
    ...nodeJournalFs,
    write: (fd, data, position) =>
      disk.full && (disk.room === undefined || data.length > disk.room)
        ? Promise.reject(
            Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" }),
          )
        : nodeJournalFs.write(fd, data, position),
  };
  return { fs, disk };
}

const NOW = () => 5000;

/** A store in a new home's `state/` on a disk the test fills (`disk.full`); `onError` hears the failed writes. */
function storeOnFullDisk(onError: (err: unknown) => void = () => {}) {
  const home = tempHome();
  homes.push(home);
  const dir = join(home.dir, "state");
  const { fs, disk } = fullDisk();
  const store = new LocalStateStore({ dir, now: NOW, fs, onError });
  stores.push(store);
  return { dir, disk, store };
}

describe("records the journal could not write while the disk was full", () => {
  it("a run that finished meanwhile is restated finished once writes succeed again: a restart does not run it a second time", async () => {
    const { dir, disk, store } = storeOnFullDisk();
    store.runAccepted(run("one"), 1000);
    await store.durable();

    // Its agent ends while the disk is full: the finish record is not written.
    disk.full = true;
    store.runFinished("pr", "one");
    await expect(store.durable()).rejects.toThrow("ENOSPC");

    // Room again: the next record is written and synced, and the outage is over.
    disk.full = false;
    store.runAccepted(run("two"), 1000);
    await store.durable();
    await store.journal.rotated();
    expect(readdirSync(dir).filter((name) => name.endsWith(".seg"))).toHaveLength(1);

    // A crash (or a stop) now: the journal owes "two" only; "one" ran and is not run again.
    leaveLockAsCrashed(dir);
    const after = new LocalStateStore({ dir, now: NOW });
    stores.push(after);
    expect(after.recover().runs.map((r) => r.deliveryId)).toEqual(["two"]);
  });

  it("a group that fired meanwhile, and its run that finished, are not reopened or run again after a restart", async () => {
    const { dir, disk, store } = storeOnFullDisk();
    store.groupUpdated({ id: "pr:7", latest: run("g-2"), merged: 2, firstAt: 1000, lastAt: 1000 });
    await store.durable();

    // Its window closes while the disk is full: its run's record and the record that it fired are lost.
    disk.full = true;
    store.runAccepted(run("g-2"), 1000);
    store.groupFired("pr:7");
    store.runFinished("pr", "g-2");
    await expect(store.durable()).rejects.toThrow("ENOSPC");

    disk.full = false;
    store.remember("pr:other", 5000);
    await store.durable();
    await store.journal.rotated();

    leaveLockAsCrashed(dir);
    const after = new LocalStateStore({ dir, now: NOW });
    stores.push(after);
    expect(after.recover()).toMatchObject({ runs: [], groups: [] });
  });

  it("a restatement that fails too (room for a small record only) is tried again once the journal took a snapshot's size, and is logged", async () => {
    const errors: unknown[] = [];
    const { dir, disk, store } = storeOnFullDisk((err) => errors.push(err));
    store.runAccepted(run("one"), 1000);
    await store.durable();
    disk.full = true;
    store.runFinished("pr", "one");
    await expect(store.durable()).rejects.toThrow("ENOSPC");

    // A small record fits (the outage ends), the restating snapshot does not.
    disk.room = 64;
    store.remember("pr:small", 5000);
    await store.durable();
    await store.journal.rotated();
    expect(errors.map((err) => (err as Error).constructor.name)).toEqual(["Error", "RestateFailed"]);
    expect(journalErrorLine(dir, errors[1]).message).toBe(
      `[state] restating the journal in ${dir} after its writes failed did not succeed either; until it does, runs that finished and groups that fired while writes failed would run again after a restart — it is tried again as the journal takes more records; check the disk has room`,
    );

    // Room again: tried once the segment grew by a snapshot's size, not at every record.
    disk.full = false;
    for (let i = 0; i < 20; i++) {
      store.remember(`pr:more-${i}`, 5000);
      await store.durable();
      await store.journal.rotated();
    }
    expect(errors).toHaveLength(2);
    leaveLockAsCrashed(dir);
    const after = new LocalStateStore({ dir, now: NOW });
    stores.push(after);
    expect(after.recover().runs).toEqual([]);
  });
});
