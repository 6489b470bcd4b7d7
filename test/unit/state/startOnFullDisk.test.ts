import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { GROWTH_BYTES } from "../../../src/io/state/journal/groupCommit.js";
import { segmentName } from "../../../src/io/state/journal/segments.js";
import { leaveLockAsCrashed } from "../../helpers/crashedLock.js";
import { cleanUpJournals, openJournal } from "../../helpers/journal.js";
import { CAN_MOUNT, mountSmallDisk, unmountSmallDisks } from "../../helpers/smallDisk.js";

// Registered before cleanUpJournals' own, so it runs after it (hooks run in reverse): the journals' files
// are closed before the disk is unmounted.
afterEach(() => unmountSmallDisks());
cleanUpJournals();

/** Records whose snapshot takes more pages than the full disk has left (one). */
const runs = [0, 1, 2].map((i) => ({ t: "s", k: `run-${i}`, at: i, prompt: "x".repeat(6000) }));

/** A real small disk (a tmpfs of the test's own): the kernel refuses the writes, not a facade. */
describe.skipIf(!CAN_MOUNT)("a start after a crash on a disk the journal's grown space filled", () => {
  it("cuts the dead gateway's zeros off its segment before its snapshot needs the room: the start opens with every record", async () => {
    const disk = mountSmallDisk("svc-journal-full-", "size=2m,mode=0700");
    const path = join(disk.dir, "state");
    const first = openJournal(path).journal;
    for (const run of runs) first.append(run);
    await first.durable();
    // The dead gateway's segment: its records, and a step of zeros grown ahead of them.
    expect(statSync(join(path, segmentName(1))).size).toBeGreaterThanOrEqual(GROWTH_BYTES);
    await first.close();
    leaveLockAsCrashed(path);
    // Then the disk filled up (a log, another program) and the gateway was gone.
    disk.fill(1);
    const { replayed } = openJournal(path, { live: runs });
    expect(replayed).toEqual(runs);
    expect(readdirSync(path).filter((name) => name.endsWith(".seg"))).toEqual([segmentName(2)]);
  });
});
