/**
 * How a stdio server's connect error goes on to quote what its process wrote (`connect.ts`): its last stderr
 * lines, or with none its stdout lines that were no MCP message. That text differs at each attempt
 * (timestamps, process ids) while the failure is the same.
 */
export const STDERR_TAIL = "its stderr: ";
export const STDERR_SO_FAR = "its stderr so far: ";
export const NOTHING_ON_STDERR = "it wrote nothing on stderr";
export const UNENDED_STDOUT = "its stdout holds a message not ended by a line break";

const QUOTE_STARTS = [STDERR_TAIL, STDERR_SO_FAR, NOTHING_ON_STDERR, UNENDED_STDOUT].map((s) => ` — ${s}`);

/** `error` up to where it quotes what the server process wrote: how it failed, the same at each retry. */
export function withoutProcessOutput(error: string): string {
  const starts = QUOTE_STARTS.map((start) => error.indexOf(start)).filter((at) => at >= 0);
  return starts.length === 0 ? error : error.slice(0, Math.min(...starts));
}
