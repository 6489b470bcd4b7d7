import type { LoadedConfig } from "../../config/load.js";
import type { LocalAnswer } from "../../io/localHttp.js";
import { shellWord } from "../../io/shellWord.js";
import { commandOptions, redisLabel } from "../../io/state/redis/connection.js";
import { terminalText } from "../../io/terminalText.js";
import { STATE_UNAVAILABLE } from "../../streams/stateUnavailable.js";

const UNAVAILABLE_TEXT = (STATE_UNAVAILABLE.body as { error: string }).error;

/**
 * The note after a redelivery answered `503 State store unavailable` with `state.backend: redis`: the
 * gateway could not store the event in Redis, and the answer says no more. Names the Redis (without
 * credentials) and how long the gateway waits for it; `unread`: why this command could not read the
 * subscriptions there before it sent (its own wait for the same Redis), when it could not. Nothing for
 * another answer, or with the local backend (a full disk, which the gateway's log names).
 */
export function stateUnavailableNote(
  answer: Pick<LocalAnswer, "status" | "text">,
  loaded: LoadedConfig,
  sent: { readonly id: string; readonly newId: string; readonly unread: string | undefined },
): string | undefined {
  const state = loaded.config.state;
  if (answer.status !== 503 || !answer.text.includes(UNAVAILABLE_TEXT) || state.backend !== "redis")
    return undefined;
  const label = redisLabel(state.redis_url ?? "");
  const seconds = (commandOptions().commandTimeout ?? 0) / 1000;
  const seen =
    sent.unread === undefined
      ? `unreachable, not answering in time, or refusing writes (full, read-only) — the gateway's log says which ([state] Redis at ${label} …)`
      : `this command could not reach it either, reading its subscriptions before it sent: ${sent.unread}`;
  return terminalText(
    `Note: the gateway answered 503 because Redis at ${label} (state.redis_url) did not take the redelivery: ${seen}. The gateway waits up to ${seconds} s for each Redis command before it answers 503 (as this command does for its own read), and serves again by itself once Redis answers: then run svc webhook redeliver ${shellWord(sent.id)} again (should Redis store this one late after all, it runs once: svc webhook deliveries --id ${shellWord(sent.newId)} shows whether it did)\n`,
  );
}
