import { isSvcError, SvcError } from "../../errors.js";

/**
 * The error `svc mcp call` reports. A call whose connection was lost under it, and which was not
 * replayed (no `readOnlyHint: true`), fails with the `outcome_uncertain` error: the command names it
 * first, as an agent run is told (`outcome_uncertain: …`), so a script can tell it from a call that
 * surely did not run. A call refused for want of an approval that no one could give (stdin is not a
 * terminal: the question is never asked) says how to get one.
 */
export function callFailure(err: unknown, server: string, stdinIsTerminal: boolean): unknown {
  if (isSvcError(err, "approval_denied") && !stdinIsTerminal && err.message.endsWith(" and it was denied")) {
    return new SvcError(
      "approval_denied",
      `${err.message}: stdin is not a terminal, so no one could be asked — run svc mcp call in a terminal and answer y, or set trust: full on mcp_servers.${server} if its tools may run without asking`,
      { cause: err },
    );
  }
  if (!isSvcError(err, "outcome_uncertain") || err.message.startsWith("outcome_uncertain: ")) return err;
  return new SvcError("outcome_uncertain", `outcome_uncertain: ${err.message}`, { cause: err });
}
