import { SseError } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { describeWithCauses } from "../../errors.js";

/** The HTTP status a transport error carries (Streamable HTTP or SSE). */
export function httpStatusOf(err: unknown): number | undefined {
  if (!(err instanceof StreamableHTTPError || err instanceof SseError)) return undefined;
  const code = err.code;
  return typeof code === "number" && code >= 100 ? code : undefined;
}

/**
 * A transport error for a person: its causes, and its HTTP status when the SDK's message lacks it
 * (an empty body leaves "Error POSTing to endpoint: " with nothing after it).
 */
export function describeTransportError(err: unknown): string {
  // A TypeScript-SDK server sends an McpError's message with its "MCP error <code>: " prefix, and the
  // client adds the prefix again: "MCP error -32002: MCP error -32002: Resource ... not found".
  const text = describeWithCauses(err).replace(/(MCP error -?\d+: )\1+/g, "$1");
  const status = httpStatusOf(err);
  if (status === undefined || text.includes(String(status))) return text;
  return `${text.replace(/:\s*$/, "")} (HTTP ${status})`;
}
