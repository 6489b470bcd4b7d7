import { buildToolset, mergeToolsets, type RegisteredTool, sanitize } from "../../actors/mcp/toolNames.js";
import { secretScope } from "../../config/envFile.js";
import type { LoadedConfig } from "../../config/load.js";
import { serverEntries } from "../../config/serverOrder.js";
import { sharedPrefixText } from "../../gateway/sharedToolPrefixes.js";
import { renderToolsPolicy } from "../../io/mcp/render.js";
import { readSchemaCache } from "../../io/mcp/schemaCache.js";

/** What the gateway would register of one server's tools, next to the servers listed before it. */
export interface CrossServerView {
  /** The server's tools the gateway registers. */
  readonly kept: RegisteredTool[];
  /** Each tool a server listed earlier takes (its name is registered first), as the gateway reports it. */
  readonly collisions: string[];
  /**
   * Servers listed earlier whose tools are not known here (never connected) and could take a name of this
   * one: under the same prefix, or a prefix one of its names starts with (`q_` and `q`'s `_t`: `mcp__q___t`).
   */
  readonly unknown: string[];
}

/**
 * A CLI command connects one server, but the gateway registers a name for the server listed first in
 * `mcp_servers`: `a.b` and `a_b` both register as `mcp__a_b__*`, and so do server `q_`'s tool `t` and server
 * `q`'s tool `_t` (`mcp__q___t`), so every earlier server counts, not only those of the same prefix. Their tools are read from
 * their schema caches (what their last connect listed), so `svc mcp test|tools` show what the gateway does.
 */
export function crossServerView(
  loaded: LoadedConfig,
  server: string,
  tools: readonly RegisteredTool[],
): CrossServerView {
  const scope = secretScope(loaded.paths);
  const prefix = sanitize(server);
  // An earlier server of another prefix can only take a name that starts with its own prefix.
  const reachable = (name: string) =>
    sanitize(name) === prefix || tools.some((tool) => tool.name.startsWith(`mcp__${sanitize(name)}__`));
  const earlier: Array<readonly [string, ReturnType<typeof buildToolset>]> = [];
  const unknown: string[] = [];
  for (const [name, entry] of serverEntries(loaded.config.mcp_servers)) {
    if (name === server) break;
    if (!entry.enabled || !reachable(name)) continue;
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
    ...view.unknown.map((name) => {
      const known = `its tools are not known here (svc mcp test ${name} lists them)`;
      if (sanitize(name) === sanitize(server))
        return `note: server ${name}, listed before ${server} in mcp_servers, registers under the same prefix mcp__${sanitize(server)}__ and takes any name both list; ${known}`;
      const prefix = `mcp__${sanitize(name)}__`;
      const names = view.kept.filter((t) => t.name.startsWith(prefix)).map((t) => t.name);
      return `note: server ${name}, listed before ${server} in mcp_servers, registers names starting ${prefix}, as ${names.join(", ")} of ${server} ${names.length === 1 ? "does" : "do"}, and takes any name both list; ${known}`;
    }),
  ];
}

/**
 * Why none of the server's tools is registered when servers listed earlier took every name it lists (the
 * server itself listed some: "none listed" would be wrong); undefined otherwise.
 */
export function allTakenReason(view: CrossServerView): string | undefined {
  const lost = view.collisions.length;
  if (view.kept.length > 0 || lost === 0) return undefined;
  return `${lost === 1 ? "the one tool it lists registers" : `each of the ${lost} tools it lists registers`} under a name a server listed earlier in mcp_servers takes: see the collision ${lost === 1 ? "line" : "lines"}`;
}

/**
 * For a server just named in `mcp_servers` (`names`: every server, in the file's order): a note when another
 * server's name registers its tools under the same prefix (`a.b` and `a_b`: both `mcp__a_b__<tool>`), since
 * the one listed first keeps every name both list and the other's tool is skipped — the name is free as
 * written, so nothing else tells the user before the gateway reports the collisions.
 */
export function samePrefixNote(server: string, names: Iterable<string>): string | undefined {
  const prefix = sanitize(server);
  const sharing = [...names].filter((name) => sanitize(name) === prefix);
  const others = sharing.filter((name) => name !== server);
  if (others.length === 0) return undefined;
  return `Note: ${sharedPrefixText(server, others, sharing[0] as string)}`;
}

/**
 * Whether a server listed before `server` in `mcp_servers` could take one of its names: only then does
 * `svc mcp call` look at the other servers' caches before it calls (the gateway never runs a tool it skips).
 */
export function hasEarlierServer(loaded: LoadedConfig, server: string): boolean {
  for (const [name, entry] of serverEntries(loaded.config.mcp_servers)) {
    if (name === server) return false;
    if (entry.enabled) return true;
  }
  return false;
}

/**
 * Why `svc mcp call <server> <tool>` does not run `tool` when the gateway skips it for a server listed earlier:
 * found as the hub finds a tool (its own name first, then the registered `mcp__…` name or the sanitized name),
 * among the server's tools that the view leaves out. Undefined when the tool is one the gateway registers,
 * or one the hub itself names (not listed, filtered out).
 */
export function lostToCrossServer(
  server: string,
  tool: string,
  own: readonly RegisteredTool[],
  view: CrossServerView,
): string | undefined {
  const found =
    own.find((t) => t.original === tool) ??
    (tool.startsWith("mcp__")
      ? own.find((t) => t.name === tool)
      : sanitize(tool) === tool
        ? own.find((t) => t.name === `mcp__${sanitize(server)}__${tool}`)
        : undefined);
  if (found === undefined || view.kept.some((t) => t.name === found.name)) return undefined;
  const head = `${server}: ${JSON.stringify(found.original)} registers as ${found.name},`;
  const collision = view.collisions.find((c) => c.startsWith(head));
  if (collision === undefined) return undefined;
  return `mcp_servers.${server}: no tool "${tool}" is registered — it lost a name collision: ${collision.slice(server.length + 2)}`;
}
