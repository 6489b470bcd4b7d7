import { isSvcError, SvcError } from "../../errors.js";

/**
 * The error `svc mcp call` reports. A call whose connection was lost under it, and which was not
 * replayed (no `readOnlyHint: true`), fails with the `outcome_uncertain` error: the command names it
 * first, as an agent run is told (`outcome_uncertain: …`), so a script can tell it from a call that
 * surely did not run.
 */
export function callFailure(err: unknown): unknown {
  if (!isSvcError(err, "outcome_uncertain") || err.message.startsWith("outcome_uncertain: ")) return err;
  return new SvcError("outcome_uncertain", `outcome_uncertain: ${err.message}`, { cause: err });
}
