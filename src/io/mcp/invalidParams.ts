import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";

/**
 * A request svc answers with JSON-RPC's `-32602` Invalid params, `message` the answer's whole message: the
 * SDK's `Protocol` answers a handler's error with its integer `code` and its `message`. An `McpError`
 * carries "MCP error -32602: " in its message, which the asking side (an SDK too) adds once more.
 */
export class InvalidParamsError extends Error {
  readonly code = ErrorCode.InvalidParams;

  constructor(message: string) {
    super(message);
    this.name = "InvalidParamsError";
  }
}
