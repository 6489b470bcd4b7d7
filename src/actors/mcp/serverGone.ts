import { SvcError } from "../../errors.js";

/**
 * A call never sent because its server is disabled (`enabled: false`) or no longer configured when its turn
 * came (a reload while it waited behind the server's earlier call): a run's call says so as one made after
 * that reload does (src/agent/mcpTools.ts), `svc mcp call` by this message. Apart from the runtime so that
 * the agent's tools can tell it without loading the MCP SDK.
 */
export class ServerGoneError extends SvcError {}

/** Whether `err` (or an error it wraps) is a `ServerGoneError`. */
export function serverGone(err: unknown): boolean {
  for (let e = err; e instanceof Error; e = e.cause) if (e instanceof ServerGoneError) return true;
  return false;
}
