import { buildToolset, mergeToolsets, type RegisteredTool, sanitize } from "../../actors/mcp/toolNames.js";
import { type LoadedConfig, secretScope } from "../../config/load.js";
import { renderToolsPolicy } from "../../io/mcp/render.js";
import { readSchemaCache } from "../../io/mcp/schemaCache.js";

/** What the gateway would register of one server's tools, next to the servers listed before it. */
export interface CrossServerView {
  /** The server's tools the gateway registers. */
  readonly kept: RegisteredTool[];
  /** Each tool a server listed earlier takes (its name is registered first), as the gateway reports it. */
  readonly collisions: string[];
  /** Servers listed earlier under the same prefix whose tools are not known here (never connected). */
  readonly unknown: string[];
}

/**
 * A CLI command connects one server, but the gateway registers a name for the server listed first in
 * `mcp_servers`: `a.b` and `a_b` both register as `mcp__a_b__*`. The earlier servers' tools are read from
 * their schema caches (what their last connect listed), so `svc mcp test|tools` show what the gateway does.
 */
export function crossServerView(
  loaded: LoadedConfig,
  server: string,
  tools: readonly RegisteredTool[],
): CrossServerView {
  const scope = secretScope(loaded.paths);
  const prefix = sanitize(server);
  const earlier: Array<readonly [string, ReturnType<typeof buildToolset>]> = [];
  const unknown: string[] = [];
  for (const [name, entry] of Object.entries(loaded.config.mcp_servers)) {
    if (name === server) break;
    if (!entry.enabled || sanitize(name) !== prefix) continue;
    const cache = readSchemaCache(loaded.paths.mcpCache, name, entry);
    if (cache === undefined) unknown.push(name);
    else
      earlier.push([
        name,
        buildToolset(name, cache.tools, cache.capabilities, renderToolsPolicy(entry, scope)),
      ]);
  }
  if (earlier.length === 0) return { kept: [...tools], collisions: [], unknown };
  const merged = mergeToolsets([...earlier, [server, { tools: [...tools], collisions: [] }]]);
  return {
    kept: merged.tools.filter((tool) => tool.server === server),
    collisions: [...(merged.lostBy.get(server) ?? [])],
    unknown,
  };
}

/** Lines for stderr: each collision, and each earlier server whose names cannot be known here. */
export function crossServerLines(server: string, view: CrossServerView): string[] {
  return [
    ...view.collisions.map((collision) => `collision: ${collision}`),
    ...view.unknown.map(
      (name) =>
        `note: server ${name}, listed before ${server} in mcp_servers, registers under the same prefix mcp__${sanitize(server)}__ and takes any name both list; its tools are not known here (svc mcp test ${name} lists them)`,
    ),
  ];
}
