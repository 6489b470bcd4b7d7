/**
 * `node --import tsx bench/storeAb.ts <treeA> <treeB> [pairs] [events]`: the local state store's share of
 * the accepted path, two trees in one process, interleaved. Each tree is a directory holding a compiled
 * `dist/` (`node scripts/build.mjs`). Per event, as the gateway does: `runAccepted(pendingRunOf(event))`,
 * 32 events a turn, the turn's sync awaited, then `runFinished` of each; the journal's file calls do
 * nothing and the segment never rotates (no disk, no snapshot: the encoding, framing, CRC, live mirror
 * and group commit only). Each store is first
 * filled with 150,000 events (the mirror at its cap of 100,000 keys), then `pairs` (default 40) pairs of
 * slices of `events` (default 20,000) run back to back, the first of each pair alternating; prints each
 * side's lower quartile and median, and the median of B/A over the pairs with its quartiles. Neighbouring slices share the machine's load: on a
 * shared machine the ratio holds where the absolute times do not.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { pendingRunOf as PendingRunOf } from "../src/actors/pendingRuns.js";
import type { QueuedRun } from "../src/actors/runs.js";
import type { JournalFs } from "../src/io/state/journal/fsFacade.js";
import type { LocalStateStore as Store } from "../src/state/localStore.js";

const [treeA, treeB, pairsArg, eventsArg] = process.argv.slice(2);
if (treeA === undefined || treeB === undefined) {
  process.stderr.write("usage: storeAb.ts <treeA> <treeB> [pairs] [events]\n");
  process.exit(2);
}
const pairs = Number(pairsArg ?? 40);
const events = Number(eventsArg ?? 20_000);

const noDisk: JournalFs = {
  write: async () => {},
  grow: async () => {},
  fdatasync: async () => {},
  truncate: async () => {},
  link: async () => {},
  unlink: async () => {},
  rename: async () => {},
  syncDir: async () => {},
};

interface Side {
  readonly store: Store;
  readonly pendingRunOf: typeof PendingRunOf;
  readonly dir: string;
  sequence: number;
}

async function open(tree: string, name: string): Promise<Side> {
  const { LocalStateStore } = (await import(join(tree, "dist/state/localStore.js"))) as {
    LocalStateStore: typeof Store;
  };
  const { pendingRunOf } = (await import(join(tree, "dist/actors/pendingRuns.js"))) as {
    pendingRunOf: typeof PendingRunOf;
  };
  const dir = mkdtempSync(join(tmpdir(), `svc-store-ab-${name}-`));
  return {
    store: new LocalStateStore({ dir, now: Date.now, fs: noDisk, maxSegmentBytes: 2 ** 40 }),
    pendingRunOf,
    dir,
    sequence: 0,
  };
}

/** µs of this process's CPU per event over `count` events. */
async function slice(side: Side, count: number): Promise<number> {
  const started = process.cpuUsage();
  for (let done = 0; done < count; done += 32) {
    const ids: string[] = [];
    for (let i = 0; i < 32; i++) {
      side.sequence += 1;
      const deliveryId = `${side.sequence}-1b4e28ba-2fa1-11d2-883f-0016d3cca427`;
      ids.push(deliveryId);
      const run = {
        profile: "default",
        routeName: "pr",
        event: "pull_request",
        deliveryId,
        prompt: `Review PR #${side.sequence} Add a feature to the thing by octocat in octo/hello-world`,
        extra: {},
        receivedAt: Date.now(),
      } as unknown as QueuedRun;
      side.store.runAccepted(side.pendingRunOf(run), Date.now());
    }
    await side.store.durable();
    for (const id of ids) side.store.runFinished("pr", id);
  }
  await side.store.durable();
  const used = process.cpuUsage(started);
  return (used.user + used.system) / count;
}

const a = await open(treeA, "a");
const b = await open(treeB, "b");
await slice(a, 150_000);
await slice(b, 150_000);
const ratios: number[] = [];
const times: [number[], number[]] = [[], []];
for (let pair = 0; pair < pairs; pair++) {
  const [first, second] = pair % 2 === 0 ? [a, b] : [b, a];
  const timeFirst = await slice(first, events);
  const timeSecond = await slice(second, events);
  const [timeA, timeB] = first === a ? [timeFirst, timeSecond] : [timeSecond, timeFirst];
  times[0].push(timeA);
  times[1].push(timeB);
  ratios.push(timeB / timeA);
}
const at = (values: number[], share: number) =>
  ([...values].sort((x, y) => x - y)[Math.floor(share * (values.length - 1))] as number).toFixed(3);
for (const [name, side] of [
  ["A", times[0]],
  ["B", times[1]],
] as const)
  console.log(`${name}: µs CPU per event, lower quartile ${at(side, 0.25)}, median ${at(side, 0.5)}`);
console.log(
  `B/A over ${pairs} pairs: median ${at(ratios, 0.5)} (quartiles ${at(ratios, 0.25)}–${at(ratios, 0.75)})`,
);
await Promise.all([a.store.close(), b.store.close()]);
for (const side of [a, b]) rmSync(side.dir, { recursive: true, force: true });
