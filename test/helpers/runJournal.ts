import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { RUN_JOURNAL_DIR } from "../../src/io/sessions/runJournal.js";

/**
 * How many times each delivery id ran under `homeDir`, read from the gateway's run journal (one line per
 * finished run, whatever the agent): load tests count runs with the in-process echo agent this way
 * instead of spawning a command per run.
 */
export function journalRuns(homeDir: string): Map<string, number> {
  const counts = new Map<string, number>();
  const dir = join(homeDir, "sessions", RUN_JOURNAL_DIR);
  if (!existsSync(dir)) return counts;
  for (const name of readdirSync(dir)) {
    for (const line of readFileSync(join(dir, name), "utf8").split("\n")) {
      if (line === "") continue;
      const id = (JSON.parse(line) as { delivery_id: string }).delivery_id;
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
  }
  return counts;
}
