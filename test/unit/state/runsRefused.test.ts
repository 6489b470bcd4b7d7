import { readdirSync, readFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { QueuedRun } from "../../../src/actors/runs.js";
import { type JournalFs, nodeJournalFs } from "../../../src/io/state/journal/fsFacade.js";
import { decodeRecords } from "../../../src/io/state/journal/records.js";
import { GatewayState } from "../../../src/state/gatewayState.js";
import { LocalStateStore } from "../../../src/state/localStore.js";
import type { AcceptedEvent } from "../../../src/streams/context.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { leaveLockAsCrashed } from "../../helpers/crashedLock.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

const homes: TempHome[] = [];
const stores: LocalStateStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close().catch(() => {});
  for (const home of homes.splice(0)) home.cleanup();
});

const event = (deliveryId: string): AcceptedEvent => ({
  routeName: "pr",
  route: {} as AcceptedEvent["route"],
  profile: "default",
  event: "push",
  deliveryId,
  payload: {},
  headers: {},
  prompt: "a prompt long enough that its accepted record does not fit where a finish record still does",
  extra: {},
  receivedAt: 1000,
});

/**
 * A full disk as it really is: the file's last block still has a few bytes free, so a small record (a
 * finish record, ~30 bytes) is written and synced, while an accepted run's record is written part way.
 */
function nearlyFullDisk() {
  const disk = { full: true };
  const fs: JournalFs = {
    ...nodeJournalFs,
    async write(fd, data, position) {
      if (!disk.full || data.length <= 64) return nodeJournalFs.write(fd, data, position);
      writeSync(fd, data.subarray(0, 8));
      throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    },
  };
  return { fs, disk };
}

describe("runs whose accepted record the journal could not write (answered 503)", () => {
  it("are forgotten without a record of their own: the outage is logged once, and their ids are not kept", async () => {
    const home = tempHome();
    homes.push(home);
    const dir = join(home.dir, "state");
    const { fs, disk } = nearlyFullDisk();
    const errors: unknown[] = [];
    const now = () => 5000;
    const store = new LocalStateStore({ dir, now, fs, onError: (err) => errors.push(err) });
    stores.push(store);
    const log = captureLogger();
    const state = new GatewayState(store, now, log.logger);
    const queue: QueuedRun[] = [];
    const accept = state.enqueue(
      (accepted) => {
        queue.push(accepted);
        return accepted;
      },
      { answered: { withdraw: (run) => queue.splice(queue.indexOf(run), 1).length === 1 } },
    );
    for (const id of ["one", "two", "three"]) {
      expect(accept(event(id))).toBe(true);
      await expect(store.durable()).rejects.toThrow("ENOSPC");
      // Whatever the withdrawal appended is written in a turn of its own.
      await new Promise((resolve) => setImmediate(resolve));
      await store.durable();
    }
    expect(queue).toEqual([]);
    expect(errors).toHaveLength(1);
    expect(log.messages().filter((m) => m.includes("run not started"))).toHaveLength(3);
    const segment = readdirSync(dir).find((name) => name.endsWith(".seg")) as string;
    const kinds = decodeRecords(readFileSync(join(dir, segment))).records.map((r) => (r as { t: string }).t);
    expect(kinds).toEqual(["snap", "snap-end"]);
    // Not in the mirror a snapshot restates: a retry after a restart is not a duplicate.
    expect(store.recover()).toMatchObject({ runs: [], seen: [], runKeys: [] });
    disk.full = false;
    expect(accept(event("two"))).toBe(true);
    await store.durable();
    expect(store.recover().runs.map((run) => run.deliveryId)).toEqual(["two"]);
  });

  it("one a slot took before its write failed is not run, and is forgotten the same way", async () => {
    const home = tempHome();
    homes.push(home);
    const dir = join(home.dir, "state");
    const { fs } = nearlyFullDisk();
    const now = () => 5000;
    const store = new LocalStateStore({ dir, now, fs, onError: () => {} });
    stores.push(store);
    const state = new GatewayState(store, now, captureLogger().logger);
    const taken: QueuedRun[] = [];
    // The slot took it already: the queue no longer holds it.
    const accept = state.enqueue(
      (accepted) => {
        taken.push(accepted);
        return accepted;
      },
      { answered: { withdraw: () => false } },
    );
    accept(event("one"));
    const ran: string[] = [];
    const execute = state.trackRuns(async (run) => {
      ran.push(run.deliveryId);
    });
    await execute(taken[0] as QueuedRun, new AbortController().signal);
    await new Promise((resolve) => setImmediate(resolve));
    await store.durable();
    expect(ran).toEqual([]);
    const segment = readdirSync(dir).find((name) => name.endsWith(".seg")) as string;
    const kinds = decodeRecords(readFileSync(join(dir, segment))).records.map((r) => (r as { t: string }).t);
    expect(kinds).toEqual(["snap", "snap-end"]);
    expect(store.recover()).toMatchObject({ runs: [], seen: [] });
  });

  it("a failed sync (the records may be in the file) records them refused: a restart neither runs them nor answers their retry duplicate", async () => {
    const home = tempHome();
    homes.push(home);
    const dir = join(home.dir, "state");
    let failSync = true;
    const fs: JournalFs = {
      ...nodeJournalFs,
      fdatasync: (fd) =>
        failSync ? Promise.reject(new Error("EIO: i/o error, fdatasync")) : nodeJournalFs.fdatasync(fd),
    };
    const now = () => 5000;
    const store = new LocalStateStore({ dir, now, fs, onError: () => {} });
    stores.push(store);
    const state = new GatewayState(store, now, captureLogger().logger);
    const accept = state.enqueue((accepted) => accepted, { answered: { withdraw: () => true } });
    accept(event("one"));
    await expect(store.durable()).rejects.toThrow("EIO");
    failSync = false;
    await new Promise((resolve) => setImmediate(resolve));
    await store.durable();
    const segment = readdirSync(dir).find((name) => name.endsWith(".seg")) as string;
    const kinds = decodeRecords(readFileSync(join(dir, segment))).records.map((r) => (r as { t: string }).t);
    expect(kinds).toEqual(["snap", "snap-end", "a", "f"]);
    expect(store.recover()).toMatchObject({ runs: [], seen: [] });
    // A crash before the sender's retry: what the journal says is owed and seen.
    leaveLockAsCrashed(dir);
    const after = new LocalStateStore({ dir, now });
    stores.push(after);
    expect(after.recover()).toMatchObject({ runs: [], seen: [], runKeys: [] });
  });
});
