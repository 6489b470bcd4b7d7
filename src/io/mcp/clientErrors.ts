import type { SseError } from "@modelcontextprotocol/sdk/client/sse.js";
import type { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

/**
 * The error classes of the MCP SDK's HTTP client transports, told here by the modules that load those
 * transports (./transport.ts, ./session.ts, both imported at a server's first connect). The modules that
 * read such errors (./transportErrors.ts, the call errors of actors/mcp) are loaded at every gateway start:
 * importing the transports there loaded them, their OAuth client and its metadata schemas (~15 ms of CPU)
 * for a start that connects no server. Before the transports load, no error can be one of theirs.
 */
interface ClientErrorClasses {
  readonly SseError: typeof SseError;
  readonly StreamableHTTPError: typeof StreamableHTTPError;
}

let classes: ClientErrorClasses | undefined;

/** Called by each module that imports the SDK's HTTP client transports, when it loads. */
export function knowClientErrors(loaded: ClientErrorClasses): void {
  classes = loaded;
}

/** An error of the SDK's Streamable HTTP client transport (it carries the HTTP status as `code`). */
export function isStreamableHttpError(err: unknown): err is StreamableHTTPError {
  return classes !== undefined && err instanceof classes.StreamableHTTPError;
}

/** An error of the SDK's SSE client transport. */
export function isSseError(err: unknown): err is SseError {
  return classes !== undefined && err instanceof classes.SseError;
}
