import { type AgentReply, AgentRunFailure } from "./runner.js";

/**
 * What the route's target gets when a model run fails (endpoint down, errors after the retries, a
 * malformed answer, the run's timeout), with the run's record; undefined for any other error, which
 * fails the run as before.
 */
export function failureNotice(err: unknown): AgentReply | undefined {
  if (!(err instanceof AgentRunFailure)) return undefined;
  return { text: `⚠️ Agent run failed: ${err.message}`, record: err.record };
}
