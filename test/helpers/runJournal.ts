import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { vi } from "vitest";
import { RUN_JOURNAL_DIR } from "../../src/io/sessions/runJournal.js";

/** Every line of the gateway's run journal under `homeDir` (one per finished run), parsed, file by file. */
export function journalLines<T = Record<string, unknown>>(homeDir: string): T[] {
  const dir = join(homeDir, "sessions", RUN_JOURNAL_DIR);
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) =>
    readFileSync(join(dir, name), "utf8")
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as T),
  );
}

/**
 * How many times each delivery id ran under `homeDir`, read from the gateway's run journal (one line per
 * finished run, whatever the agent): load tests count runs with the in-process echo agent this way
 * instead of spawning a command per run.
 */
export function journalRuns(homeDir: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const { delivery_id: id } of journalLines<{ delivery_id: string }>(homeDir))
    counts.set(id, (counts.get(id) ?? 0) + 1);
  return counts;
}

/** The `run` record of delivery `deliveryId`'s line in the run journal under `homeDir`, once it is written. */
export function journaledRun(homeDir: string, deliveryId: string): Promise<Record<string, unknown>> {
  return vi.waitFor(
    () => {
      const line = journalLines<{ delivery_id: string; run?: Record<string, unknown> }>(homeDir).find(
        (l) => l.delivery_id === deliveryId,
      );
      if (line?.run === undefined) throw new Error(`delivery ${deliveryId} is not journaled yet`);
      return line.run;
    },
    { timeout: 10_000, interval: 20 },
  );
}
