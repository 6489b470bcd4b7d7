import { sanitize } from "../actors/mcp/toolNames.js";
import type { McpServerEntry } from "../config/sections/mcp.js";
import { serverEntries } from "../config/serverOrder.js";

/**
 * What happens to `server`'s tools beside `others`, whose names register their tools under the same prefix
 * (`a.b`, `a-b`, `a_b`: each `mcp__a_b__<tool>`): the server listed first (`first`) keeps every name they
 * both list. Said by `svc mcp add`, `import` and `install` when they write such a name, and by the gateway's
 * start and `svc config check` for one written by hand.
 */
export function sharedPrefixText(server: string, others: readonly string[], first: string): string {
  const both = others.length === 1 ? "both" : "more than one of them";
  return `${server} registers its tools as mcp__${sanitize(server)}__<tool>, as ${others.join(" and ")} ${others.length === 1 ? "does" : "do"}: a tool name ${both} list is registered for ${first} only (listed first in mcp_servers), the other's is skipped — give one of them another name to keep both servers' tools`;
}

/**
 * One warning for each enabled server whose name registers its tools under the prefix of an enabled server
 * listed before it (`file`: the config.yaml the servers come from). The gateway otherwise tells only once
 * both have connected, one collision per tool; a server with `enabled: false` registers nothing, so it takes
 * no name. Pure.
 */
export function sharedToolPrefixWarnings(
  servers: Readonly<Record<string, McpServerEntry>>,
  file: string,
): string[] {
  const byPrefix = new Map<string, string[]>();
  for (const [name, entry] of serverEntries(servers)) {
    if (!entry.enabled) continue;
    const prefix = sanitize(name);
    byPrefix.set(prefix, [...(byPrefix.get(prefix) ?? []), name]);
  }
  const warnings: string[] = [];
  for (const sharing of byPrefix.values()) {
    const first = sharing[0] as string;
    for (const server of sharing.slice(1))
      warnings.push(
        `${file}: mcp_servers.${server}: ${sharedPrefixText(
          server,
          sharing.filter((name) => name !== server),
          first,
        )}`,
      );
  }
  return warnings;
}
