import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterEach, describe, expect, it } from "vitest";
import { LocalStateStore } from "../../../src/state/localStore.js";
import { CLI_NODE_ARGS, svcModule } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

const homes: TempHome[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  for (const home of homes.splice(0)) home.cleanup();
});

const WRITER = join(import.meta.dirname, "rotatingWriter.mjs");

/** Where the writing store keeps its idempotency keys: its own map, or a gateway's seen-ids cache. */
type Keys = "in a map of its own" | "in the pipeline's cache";

/**
 * Starts the writer on a fresh state directory, SIGKILLs it once `killWhen(files)` holds for the journal's
 * files (polled every few ms), and returns the delivery ids it had printed as durable before the kill.
 */
async function killDuringRotation(killWhen: (files: string[]) => boolean, keys: Keys) {
  const home = tempHome();
  homes.push(home);
  const dir = join(home.dir, "state");
  const shared = keys === "in the pipeline's cache" ? [svcModule("streams/seenCache.js")] : [];
  const child = spawn(
    process.execPath,
    [...CLI_NODE_ARGS, WRITER, dir, svcModule("state/localStore.js"), ...shared],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  children.push(child);
  const acked: string[] = [];
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  let ready!: () => void;
  const started = new Promise<void>((resolve) => {
    ready = resolve;
  });
  lines.on("line", (line) => {
    if (line === "ready") ready();
    else if (line.startsWith("ack ")) acked.push(line.slice(4));
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const drained = new Promise<void>((resolve) => lines.once("close", () => resolve()));
  await started;
  let seen: string[] = [];
  for (let polls = 0; polls < 30_000; polls++) {
    seen = readdirSync(dir).filter((name) => name.startsWith("journal-"));
    if (killWhen(seen)) break;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  child.kill("SIGKILL");
  await exited;
  // Whatever reached stdout before the kill was acknowledged; the pipe may still hold a few lines.
  await drained;
  return { dir, acked, filesAtKill: seen };
}

/** What a restart recovers: the pending runs' delivery ids and the idempotency keys. */
function recovered(dir: string): { runs: Set<string>; seen: Set<string> } {
  const store = new LocalStateStore({ dir, now: Date.now });
  try {
    const state = store.recover();
    return {
      runs: new Set(state.runs.map((run) => run.deliveryId)),
      seen: new Set(state.seen.map(([key]) => key)),
    };
  } finally {
    void store.close();
  }
}

/**
 * Every acknowledged delivery is known after the restart, and so is each key recorded before them; the ones
 * never finished are pending runs again.
 */
function expectNothingLost(dir: string, acked: string[]): void {
  const { runs, seen } = recovered(dir);
  expect(acked.filter((id) => !seen.has(`pr:${id}`))).toEqual([]);
  expect(Array.from({ length: 3000 }, (_, i) => `pr:seen-${i}`).filter((key) => !seen.has(key))).toEqual([]);
  const pending = acked.filter((id) => Number(id.slice(1)) % 4 === 0);
  expect(pending.filter((id) => !runs.has(id))).toEqual([]);
}

describe.each<Keys>(["in a map of its own", "in the pipeline's cache"])(
  "SIGKILL while the journal rotates, the keys %s",
  { timeout: 60_000 },
  (keys) => {
    it("mid-snapshot (a temp file beside the segment): every acknowledged run is recovered", async () => {
      const { dir, acked, filesAtKill } = await killDuringRotation(
        (files) => files.some((name) => name.endsWith(".seg.tmp") && !name.startsWith("journal-000002")),
        keys,
      );
      expect(filesAtKill.some((name) => name.endsWith(".tmp"))).toBe(true);
      expect(acked.length).toBeGreaterThan(100);
      expectNothingLost(dir, acked);
      // The restart removed the cut-short rotation's temp file.
      expect(readdirSync(dir).some((name) => name.endsWith(".tmp"))).toBe(false);
    });

    it("between the switch and the old segment's removal (two segments): every acknowledged run is recovered", async () => {
      const { dir, acked, filesAtKill } = await killDuringRotation(
        (files) =>
          files.filter((name) => name.endsWith(".seg")).length === 2 && !files.includes("journal-000002.seg"),
        keys,
      );
      expect(acked.length).toBeGreaterThan(100);
      expect(filesAtKill.filter((name) => name.endsWith(".seg"))).toHaveLength(2);
      expectNothingLost(dir, acked);
    });
  },
);
