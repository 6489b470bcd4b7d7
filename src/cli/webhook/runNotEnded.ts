import type { LoadedConfig } from "../../config/load.js";
import { commandOptions, connectRedis } from "../../io/state/redis/connection.js";
import { DEFAULT_KEY_PREFIX, redisKeys } from "../../io/state/redis/keys.js";
import { type UnendedRun, unendedRun } from "../../io/state/redis/unendedRun.js";
import type { HistoryRecord, RequestRecord } from "../../io/stores/deliveryHistory.js";
import { terminalText } from "../../io/terminalText.js";
import { seenKey } from "../../streams/stages/idempotency.js";

/** How long the command's connection waits for Redis to close its side before it is cut. */
const CLOSE_WAIT_MS = 100;

const SECOND_RUN = "this redelivery starts a second run of the same event";

/** Whether the original was accepted for a run (202 accepted, not dropped on arrival). */
const acceptedForRun = (original: RequestRecord) =>
  original.status === 202 && original.outcome === "accepted" && original.reason === undefined;

/**
 * The note of a redelivery whose original's run has not ended, as far as this history shows: the original
 * was accepted for a run and no end of that run is recorded (it waits in the run queue, saved for the next
 * start, or runs, its delivery perhaps waiting to retry). The redelivery then starts a second run beside
 * it. Undefined otherwise. Not for a shared state (Redis), where the instance that took the run records its
 * end in its own history: `sharedRunNotEndedNote`.
 */
export function runNotEndedNote(
  original: RequestRecord,
  history: readonly HistoryRecord[],
): string | undefined {
  if (!acceptedForRun(original)) return undefined;
  const ended = history.some(
    (r) => r.kind === "run" && r.id === original.id && r.route === original.route && r.at >= original.at,
  );
  if (ended) return undefined;
  return terminalText(
    `Note: the run of ${original.id} has not ended (svc webhook deliveries shows no run for it yet: it waits in the run queue, is saved for the gateway's next start, or is running) — ${SECOND_RUN}\n`,
  );
}

const WHERE: Record<UnendedRun, string> = {
  waiting: "its job is queued in Redis's shared queue, waiting for a gateway instance to run it",
  running: "a gateway instance is running it: its job is active in Redis's shared queue",
  delayed:
    "its job is set aside in Redis's shared queue until a gateway instance goes on with it: its delivery waits to retry, or no instance serves its route yet",
};

/** The note of `runNotEndedNote` with `state.backend: redis`, from where the original's job stands in the shared queue. */
export function sharedRunNotEnded(
  original: RequestRecord,
  state: UnendedRun | undefined,
): string | undefined {
  if (!acceptedForRun(original) || state === undefined) return undefined;
  return terminalText(`Note: the run of ${original.id} has not ended (${WHERE[state]}) — ${SECOND_RUN}\n`);
}

/**
 * With `state.backend: redis`: the note when the original's run has not ended in the shared queue (the
 * redelivery answered 202). Redis is read once; one that cannot be read gives no note (the redelivery went).
 */
export async function sharedRunNotEndedNote(
  loaded: LoadedConfig,
  original: RequestRecord,
): Promise<string | undefined> {
  if (!acceptedForRun(original)) return undefined;
  const state = loaded.config.state;
  const prefix = state.redis_key_prefix ?? DEFAULT_KEY_PREFIX;
  let redis: Awaited<ReturnType<typeof connectRedis>> | undefined;
  try {
    redis = await connectRedis(
      state.redis_url ?? "",
      loaded.paths.config,
      { ...commandOptions(), retryStrategy: () => null, disconnectTimeout: CLOSE_WAIT_MS },
      prefix,
    );
    redis.on("error", () => {});
    return sharedRunNotEnded(
      original,
      await unendedRun(redis, redisKeys(prefix), seenKey(original.route, original.id)),
    );
  } catch {
    return undefined;
  } finally {
    redis?.disconnect();
  }
}
