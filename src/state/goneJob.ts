import { shellWord } from "../io/shellWord.js";
import { keyOfJobId } from "../io/state/redis/jobIds.js";

/** What a shared run whose job is no longer in Redis is said to be. */
export const JOB_GONE = "its job is gone from Redis (restarted empty, flushed or evicted)";

/**
 * The WARN line of a job taken from the shared queue with its hash gone (evicted while its id waited in the
 * queue): no run to go on with, so it does not run and is removed. Named by its job id, from which its route
 * and delivery id are read (a coalescing group's `j-coalesce-<n>` names neither).
 */
export function goneJobLine(jobId: string): string {
  let key = "";
  try {
    key = keyOfJobId(jobId);
  } catch {
    // Not an id svc made (`jobIdOf`): named as it is.
  }
  const colon = key.indexOf(":");
  if (colon < 0)
    return `[state] runs job ${jobId} does not run: ${JOB_GONE}, only its id was left in the queue — it is removed`;
  const route = key.slice(0, colon);
  const deliveryId = key.slice(colon + 1);
  return `[webhook] ${route}: run of delivery ${deliveryId} does not run: ${JOB_GONE}, only its id (${jobId}) was left in the queue — it is removed; svc webhook redeliver ${shellWord(deliveryId)} on the instance that answered its request sends the event again`;
}
