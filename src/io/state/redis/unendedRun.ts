import type { Redis } from "ioredis";
import { jobIdOf } from "./jobIds.js";
import type { RedisKeys } from "./keys.js";

/** The shared queue every instance's runs (agent runs, fired cron jobs) wait in. */
export const RUNS_QUEUE = "runs";

/**
 * Where a run stored in the shared queue stands while it has not ended: `waiting` for an instance,
 * `running` on one, or `delayed` (its delivery waiting to retry outside its slot, its route served by no
 * instance yet, or handed on by a stopped instance: an instance goes on with it once due).
 */
export type UnendedRun = "waiting" | "running" | "delayed";

/**
 * The run stored under `key` (`<route>:<delivery id>`) when it has not ended; undefined when no job is
 * stored under it (never stored, or its finished job's hour is over) or its job is finished. One
 * transaction, so the job is not read between two of its moves.
 */
export async function unendedRun(
  redis: Redis,
  keys: RedisKeys,
  key: string,
): Promise<UnendedRun | undefined> {
  const queue = `${keys.bullPrefix()}:${RUNS_QUEUE}`;
  const id = jobIdOf(key);
  const answers = await redis
    .multi()
    .hmget(`${queue}:${id}`, "timestamp", "finishedOn")
    .lpos(`${queue}:active`, id)
    .zscore(`${queue}:delayed`, id)
    .exec();
  if (answers === null) return undefined;
  const [stamps, active, delayed] = answers.map(([err, value]) => {
    if (err !== null) throw err;
    return value;
  }) as [Array<string | null>, number | null, string | null];
  const [added, finished] = stamps;
  if (added === null || finished !== null) return undefined;
  if (active !== null) return "running";
  return delayed !== null ? "delayed" : "waiting";
}
