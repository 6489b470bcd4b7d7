import { SvcError } from "../../errors.js";
import type { Runtime } from "./runtime.js";
import { type RegisteredTool, registeredName, sanitize, utilityCollision } from "./toolNames.js";

/**
 * A server's tool by its own name; failing that, by its registered `mcp__<server>__<tool>` name or the
 * sanitized tool name (`write_note` for `write-note`), as the agent and `svc mcp tools` show them. The
 * server's own name of a tool that is not registered (filtered out, or lost a collision), the name of a
 * utility tool that lost a collision (`get_prompt`, to the server's `get-prompt`), and any name with
 * characters sanitizing replaces (`a-b`), never finds another tool registered as the same `a_b`.
 */
export function findTool(rt: Runtime, name: string): RegisteredTool | undefined {
  const tools = rt.toolset.tools;
  const own = tools.find((t) => t.original === name);
  if (own !== undefined) return own;
  if (name.startsWith("mcp__")) return tools.find((t) => t.name === name);
  if (rt.listed.has(name) || sanitize(name) !== name) return undefined;
  if (utilityCollision(name, rt.toolset.collisions) !== undefined) return undefined;
  return tools.find((t) => t.name === registeredName(rt.name, name));
}

/**
 * A tool of the listing it was registered from (the schema cache, an earlier process, the session a call was
 * lost with) that the server, connected for the call, no longer lists (removed in an update): not sent to the
 * server. `lost`: the call was sent, and its session lost ("session expired", "connection was lost") before it
 * answered; it is not replayed, and may have run.
 */
export function noLongerOffered(
  rt: Runtime,
  tool: RegisteredTool,
  now?: RegisteredTool,
  lost?: string,
): SvcError {
  const invalid = rt.toolset.invalid?.find((i) => i.tool === tool.original);
  const other = now === undefined ? "" : `; ${tool.name} is now its tool ${JSON.stringify(now.original)}`;
  if (lost !== undefined) {
    const unsure = `it was not replayed, and may or may not have run before the ${lost} — verify its effect before calling it again`;
    return new SvcError(
      "outcome_uncertain",
      invalid === undefined
        ? `mcp_servers.${rt.name} no longer offers ${JSON.stringify(tool.original)} (the server, reconnected after the ${lost} while it was being called, does not list it: its tools changed since the listing it was registered from${other}); ${unsure}`
        : `mcp_servers.${invalid.report}; ${unsure}`,
    );
  }
  return new SvcError(
    "mcp_call",
    invalid === undefined
      ? `mcp_servers.${rt.name} no longer offers ${JSON.stringify(tool.original)} (the server, connected for this call, does not list it: its tools changed since the listing it was registered from${other}); the tool was not run`
      : `mcp_servers.${invalid.report}`,
  );
}

/**
 * `tool` as the server lists it now, after a connect made since it was found (a lazy server's, a reconnect
 * while the call's approval waited or for a replay): the live listing decides whether the call is sent and
 * what its hint is. By `name` (the call's), the live listing may give another tool: one that had lost the
 * registered name to it. `lost`: see noLongerOffered.
 */
export function liveTool(rt: Runtime, tool: RegisteredTool, name: string, lost?: string): RegisteredTool {
  const live = findTool(rt, name);
  if (live?.original !== tool.original) throw noLongerOffered(rt, tool, live, lost);
  return live;
}
