import { join } from "node:path";
import { describe, type WrittenAs } from "../../config/describe.js";
import { secretScope } from "../../config/envFile.js";
import { addVariablesAdvice, type InterpolationScope, interpolateDeep } from "../../config/interpolate.js";
import { DEFAULT_PROFILE, svcPaths } from "../../config/paths.js";
import type { Config } from "../../config/schema.js";
import { type McpServerEntry, sentHeaders } from "../../config/sections/mcp.js";

/** The `${VAR}` names a value uses (strings anywhere in it) that neither `.env` nor the environment sets, each once. */
function unsetIn(value: unknown, scope: InterpolationScope): string[] {
  const unresolved: string[] = [];
  interpolateDeep(value, scope, unresolved);
  return [...new Set(unresolved)];
}

/**
 * What of an entry a connect reads: a stdio server is sent no headers, and a remote one only those svc
 * sends (not Host, Content-Length, ...), so a variable elsewhere in `headers` needs no value.
 */
function readByConnect(entry: McpServerEntry): Partial<McpServerEntry> {
  const { headers, ...rest } = entry;
  return entry.url === undefined ? rest : { ...rest, headers: sentHeaders(headers) };
}

/** The `${VAR}` names an MCP server entry uses that neither `.env` nor the environment sets, each once. */
export function unsetMcpVariables(entry: McpServerEntry, scope: InterpolationScope): string[] {
  return unsetIn(readByConnect(entry), scope);
}

/**
 * The unset `${VAR}` names of an entry by what a connect does with them: `failing` are those of a remote
 * server's `url` and `headers`, where the connect fails closed; `literal` are the others, which keep their
 * literal text (a stdio server starts with `${X}` in its arguments).
 */
export function unsetMcpVariablesByEffect(
  entry: McpServerEntry,
  scope: InterpolationScope,
): { failing: string[]; literal: string[] } {
  const { url, headers, ...rest } = entry;
  const failing = url === undefined ? [] : unsetIn([url, sentHeaders(headers)], scope);
  const literal = unsetIn(url === undefined ? readByConnect(entry) : rest, scope);
  return { failing, literal: literal.filter((name) => !failing.includes(name)) };
}

/**
 * The `${VAR}`s an enabled MCP server needs that a named profile's runs do not get: such runs connect with
 * that profile's own `.env` (then the process environment), not the default profile's. `given(profile)`: the
 * text config.yaml writes for a profile a `${VAR}` gave (`givenProfiles`), named instead of the profile, and
 * its `.env` without the path built from it.
 */
export function profileMcpVariableWarnings(
  config: Config,
  home: string,
  profiles: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  given: (profile: string) => WrittenAs | undefined = () => undefined,
): string[] {
  const warnings: string[] = [];
  for (const profile of profiles) {
    if (profile === DEFAULT_PROFILE) continue;
    const paths = svcPaths(home, profile);
    let scope: InterpolationScope;
    try {
      scope = secretScope(paths, env);
    } catch {
      continue; // a .env that cannot be read is named by profileEnvFileWarnings, as at the gateway's start
    }
    for (const [name, entry] of Object.entries(config.mcp_servers)) {
      if (!entry.enabled) continue;
      const unset = unsetMcpVariables(entry, scope);
      if (unset.length === 0) continue;
      const one = unset.length === 1;
      const written = given(profile);
      const shown = written === undefined ? profile : describe(written);
      const envFile =
        written === undefined
          ? paths.env
          : `that profile's .env (in its directory under ${join(home, "profiles")})`;
      warnings.push(
        `${paths.config}: mcp_servers.${name}: ${unset.map((n) => `\${${n}}`).join(", ")} ${one ? "is" : "are"} not set for profile ${shown}, whose runs connect with its own .env — ${addVariablesAdvice(unset, `${envFile} or the environment`)}`,
      );
    }
  }
  return warnings;
}
