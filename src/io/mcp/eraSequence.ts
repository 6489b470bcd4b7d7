import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { STATELESS_VERSION, UnspokenVersionsError } from "./eras.js";
import { describeTransportError } from "./transportErrors.js";

/**
 * What became of a request of an opening's era sequence that another follows (`auto`'s `initialize`
 * refused as modern-only, before its `server/discover` probe; `stateless`'s failed `server/discover`,
 * before its legacy `initialize` retry): the server's answer, quoted as an error is, or the wait it got no
 * answer within. `unspokenVersions` marks a `server/discover` answer that lists no version svc speaks (an
 * MCP server of another revision): what follows it advises the versions svc speaks, not "is this MCP?".
 * `legacyVersions` holds the versions of one that leaves out 2026-07-28 but lists some svc speaks through
 * `initialize` (2025-06-18): that server should answer the legacy retry.
 */
export type EraOutcome =
  | {
      readonly answer: string;
      readonly unspokenVersions?: true;
      readonly legacyVersions?: readonly string[];
    }
  | { readonly unansweredMs: number };

/**
 * How a request of the sequence failed: its own wait ran out (the SDK's timeout, carrying it), or the answer,
 * described as describeTransportError does (`shown` names a url a `${VAR}` gave as written before `secrets`
 * are hidden, so a host `.env` gave is named, not hidden).
 */
export function eraOutcome(
  err: unknown,
  secrets: readonly string[],
  shown?: (text: string) => string,
): EraOutcome {
  const timeout =
    err instanceof McpError ? (err.data as { timeout?: unknown } | undefined)?.timeout : undefined;
  if (err instanceof McpError && err.code === ErrorCode.RequestTimeout && typeof timeout === "number")
    return { unansweredMs: timeout };
  const answer = describeTransportError(err, secrets, shown);
  if (!(err instanceof UnspokenVersionsError)) return { answer };
  return err.spoken.length === 0
    ? { answer, unspokenVersions: true }
    : { answer, legacyVersions: err.spoken };
}

/** A wait in seconds, to a tenth (`4`, `0.5`). */
export function shownSeconds(ms: number): string {
  return String(Math.round(ms / 100) / 10);
}

/** An outcome as the messages quote it, in their parentheses. */
export function outcomeText(outcome: EraOutcome): string {
  return "answer" in outcome
    ? outcome.answer
    : `got no answer within ${shownSeconds(outcome.unansweredMs)} s`;
}

/**
 * An outcome as a composed message quotes it: the server's answer through `quote` (a url a `${VAR}` gave
 * named as written), or the wait it got no answer within.
 */
export function quotedOutcome(
  outcome: EraOutcome,
  err: unknown,
  quote: { error(err: unknown): string },
): string {
  return "answer" in outcome ? quote.error(err) : outcomeText(outcome);
}

/**
 * `auto`'s sequence: `initialize` refused as modern-only, then the `server/discover` probe, which `probe`
 * says the end of (`failed too (…) — …`, `found no version svc speaks (…)`, `was answered: …`).
 */
export function autoProbeFailed(refused: string, probe: string): string {
  return `initialize was refused (${refused}), and the server/discover probe of the ${STATELESS_VERSION} revision that protocol: auto tries next ${probe}`;
}

/** `stateless`'s sequence: `server/discover` failed, then the legacy `initialize` retry failed too. */
export function statelessRetryFailed(probe: string, retry: string): string {
  return `server/discover failed (${probe}) and the legacy initialize retry failed (${retry})`;
}
