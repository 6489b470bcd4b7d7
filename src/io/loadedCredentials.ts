import { CREDENTIAL_NAME } from "../config/credentialHeader.js";
import type { InterpolationScope } from "../config/interpolate.js";
import type { Config } from "../config/schema.js";
import type { McpServerEntry, McpServers } from "../config/sections/mcp.js";
import { webhookSecretValues } from "../config/webhookSecrets.js";
import { isPlaceholderKey } from "./credentials.js";
import { entrySecrets } from "./mcp/entrySecrets.js";
import { renderEntry } from "./mcp/render.js";
import { GH_TOKEN_VARIABLES } from "./targets/ghTokens.js";

/**
 * The shortest value hidden for being a credential svc has loaded: a shorter one (`TOKEN_TTL=3600` in `.env`)
 * would turn a reply's own words and numbers into `[redacted]`.
 */
export const MIN_LOADED_CREDENTIAL = 8;

/** The settings of `platforms.<name>` that hold a credential (`token`, `app_secret`, `auth_token`, `password`). */
function platformCredentials(config: Config): string[] {
  const found: string[] = [];
  for (const [platform, settings] of Object.entries(config.platforms)) {
    if (platform === "webhook" || settings === undefined) continue;
    // `token_url` names where a token is fetched, not the token.
    for (const [key, value] of Object.entries(settings))
      if (typeof value === "string" && CREDENTIAL_NAME.test(key) && !key.endsWith("_url")) found.push(value);
  }
  // Telegram's API quotes the secret part of a bot token (after `<bot id>:`) alone.
  const telegram = config.platforms.telegram?.token;
  if (telegram?.includes(":")) found.push(telegram.slice(telegram.indexOf(":") + 1));
  return found;
}

/** What an MCP server's entry sends as a credential (its headers, credential-named `env`, URL passwords, ...). */
export function entryCredentials(name: string, entry: McpServerEntry, scope: InterpolationScope): string[] {
  try {
    return entrySecrets(renderEntry(name, entry, scope));
  } catch {
    // An entry that cannot be rendered (a url's variable unset) sends nothing.
    return [];
  }
}

function mcpCredentials(servers: McpServers, scope: InterpolationScope): string[] {
  return Object.entries(servers).flatMap(([name, entry]) => entryCredentials(name, entry, scope));
}

/**
 * Every credential svc has loaded for the config: each `.env` value whose variable names a credential, the
 * platforms' tokens, secrets and passwords, `agent.api_key`, `tools.web_search.api_key`, the webhook secrets,
 * what the MCP servers send as credentials, and gh's token variables of the environment. An agent run's reply
 * is delivered with them `[redacted]`: a payload can tell an agent to read `~/.svc/.env` or print its environment.
 * A value under `MIN_LOADED_CREDENTIAL` characters, or a placeholder word (`isPlaceholderKey`), is left out.
 */
export function loadedCredentials(config: Config, scope: InterpolationScope): string[] {
  const values = [
    ...Object.entries(scope.secrets).flatMap(([name, value]) => (CREDENTIAL_NAME.test(name) ? [value] : [])),
    ...platformCredentials(config),
    config.agent.api_key,
    config.tools.web_search?.api_key,
    ...webhookSecretValues(config),
    ...mcpCredentials(config.mcp_servers, scope),
    ...GH_TOKEN_VARIABLES.map((name) => scope.env[name]),
  ];
  return keptCredentials(values);
}

/**
 * What the MCP servers send as credentials when a named profile's hub renders them with that profile's scope
 * (`profiles/<name>/.env`, then the environment): hidden as `loadedCredentials` are, in every profile's runs.
 */
export function profileMcpCredentials(servers: McpServers, scope: InterpolationScope): string[] {
  return keptCredentials(mcpCredentials(servers, scope));
}

/** The values long enough to hide and no placeholder, each once, the longest first. */
export function keptCredentials(values: readonly (string | undefined)[]): string[] {
  const kept = new Set<string>();
  for (const value of values) {
    const trimmed = value?.trim();
    if (trimmed !== undefined && trimmed.length >= MIN_LOADED_CREDENTIAL && !isPlaceholderKey(trimmed))
      kept.add(trimmed);
  }
  // The longest first: a token whose part is hidden too (Telegram's) is hidden whole.
  return [...kept].sort((a, b) => b.length - a.length);
}
