import { dirname } from "node:path";
import { homeProblem } from "../../io/homeWritable.js";

/**
 * The refusal of a server name config.yaml does not have (`svc mcp tools|test|call|remove <name>`): the names
 * it has, or, with no file at all, that there is none, as `svc mcp list` says it (an SVC_HOME set to another
 * directory shows there).
 */
export function unknownServerMessage(
  name: string,
  config: string,
  fileExists: boolean,
  known: readonly string[],
): string {
  if (fileExists) return `no MCP server named "${name}" in ${config} (known: ${known.join(", ") || "none"})`;
  // An SVC_HOME that cannot hold the file (a file, a link to nothing, unwritable): `svc mcp add` would fail too.
  const home = homeProblem(dirname(config));
  return home !== undefined
    ? `no MCP server named "${name}": there is no ${config}, and ${home}`
    : `no MCP server named "${name}": there is no ${config} (svc mcp add ${name} -- <command> creates it with the server)`;
}
