/**
 * Where a key config.yaml does not have belongs instead: another section's key written one level off, a
 * route or subscription property in the other kind of route, and the names other webhook servers, agents
 * and MCP clients give svc's keys. `formatIssue` adds what these say to an unknown key's message.
 */
import { nearMiss } from "./nearMiss.js";
import { MCP_ENTRY_KEYS } from "./sections/mcp.js";
import { routeShape } from "./sections/webhook.js";

/** Keys of config.yaml that users put one level off: where each one goes. */
const HOME_OF_KEY: Readonly<Record<string, string>> = {
  multiplex_profiles: "gateway",
  approvals: "gateway",
  drain_timeout_seconds: "gateway",
  provider: "agent",
  max_concurrent_runs: "agent",
  max_tool_result_chars: "agent",
  webhook: "platforms",
  routes: "platforms.webhook",
  rate_limit: "platforms.webhook",
  max_body_bytes: "platforms.webhook",
  events: "platforms.webhook.routes.<name>",
  deliver: "platforms.webhook.routes.<name>",
  deliver_only: "platforms.webhook.routes.<name>",
  filters: "platforms.webhook.routes.<name>",
  prompt: "platforms.webhook.routes.<name>",
};

/**
 * Keys of a section written at the top level, as a flat config (another tool's, or a first try) has them:
 * where each one goes. Only at the top level, where no section of that name exists (`port` of a delivery
 * platform or `api_key` of a search tool are their own keys).
 */
const HOME_OF_TOP_LEVEL_KEY: Readonly<Record<string, string>> = {
  host: "platforms.webhook",
  port: "platforms.webhook",
  secret: "platforms.webhook",
  enabled: "platforms.webhook",
  model: "agent",
  api_key: "agent",
  base_url: "agent",
  system_prompt: "agent",
  max_steps: "agent",
  backend: "state",
  redis_url: "state",
};

const NO_SAMPLING_SETTINGS =
  "svc sends no sampling settings (the model's own defaults apply) — remove it, or set it where the model is served";

/** OpenRouter's `HTTP-Referer` and `X-Title`, a gateway's own authentication header: no key sends them. */
const NO_OWN_HEADERS =
  "svc sends no request headers of your own: a gateway that takes its key as Authorization: Bearer gets it from api_key; for any other header, put a reverse proxy in front of the endpoint that adds it, and set base_url to the proxy";

/**
 * Keys other agent frameworks and model clients write for the same settings (the OpenAI SDK, LiteLLM,
 * LangChain, the Claude Agent SDK), spelled too far from svc's for a did-you-mean: what `agent` reads
 * instead, or that it has no such setting (`temperature` is spelled right: "check the spelling" misleads).
 */
const OTHER_TOOLS_AGENT_KEYS: Readonly<Record<string, string>> = {
  temperature: NO_SAMPLING_SETTINGS,
  top_p: NO_SAMPLING_SETTINGS,
  top_k: NO_SAMPLING_SETTINGS,
  frequency_penalty: NO_SAMPLING_SETTINGS,
  presence_penalty: NO_SAMPLING_SETTINGS,
  seed: NO_SAMPLING_SETTINGS,
  headers: NO_OWN_HEADERS,
  default_headers: NO_OWN_HEADERS,
  extra_headers: NO_OWN_HEADERS,
  stream:
    "svc asks the endpoint for one JSON answer per model turn, never a stream: remove it (an endpoint that streams all the same is read as well)",
  max_retries: "write retries (retries of one model call)",
  max_turns: "write max_steps (model turns per run)",
  max_iterations: "write max_steps (model turns per run)",
  api_base: "write base_url",
  openai_api_base: "write base_url",
  base_path: "write base_url",
  endpoint: "write base_url (svc appends /chat/completions or /messages to it)",
  model_name: "write model",
  max_output_tokens: "write max_tokens (output tokens per model turn)",
  max_completion_tokens: "write max_tokens (svc sends it as max_completion_tokens where the API wants that)",
  system: "write system_prompt",
  concurrency: "write max_concurrent_runs",
};

const FOUND_FROM_METADATA =
  "svc finds the authorization server from the MCP server's metadata (RFC 9728, then RFC 8414): remove it";

/**
 * Keys of Claude Code's and Gemini CLI's `oauth` mapping pasted into an MCP server's `oauth`, too far from
 * svc's for a did-you-mean: what svc reads instead (`clientId`, `scopes`, `redirectUri` are near misses).
 */
const OTHER_CLIENTS_OAUTH_KEYS: Readonly<Record<string, string>> = {
  callbackPort:
    "write redirect_uri: http://localhost:<port>/callback (the callback registered with the client), or redirect_port: <port> for http://127.0.0.1:<port>/callback",
  authServerMetadataUrl: FOUND_FROM_METADATA,
  authorizationUrl: FOUND_FROM_METADATA,
  tokenUrl: FOUND_FROM_METADATA,
  enabled: "auth: oauth beside oauth turns the login on: remove it",
};

/** Keys of a dynamic subscription's record that a config.yaml route does not have, and what to do instead. */
const SUBSCRIPTION_ONLY: Readonly<Record<string, string>> = {
  enabled:
    "a config.yaml route has no enabled flag: it is served while it is in the file — remove it (or comment it out) to stop it; enabled belongs to subscriptions (svc webhook disable)",
  description:
    "a config.yaml route has no description: write a # comment above it; description belongs to subscriptions",
};

const TARGET_KEY = (key: string) =>
  `a key of the delivery target: put it under deliver_extra (deliver_extra: {${key}: ...})`;
const ROUTE_SECRET_KEY = "write secret (the route's HMAC secret or token)";
const NO_PATH_KEY =
  "a route answers at /webhooks/<its name>: the name is its path — remove it (rename the route for another path)";

/**
 * Route keys as other webhook relays (and a route's own subkeys written a level up) name them, too far from
 * svc's for a did-you-mean: what a route reads instead (`chat_id` beside `deliver` belongs in `deliver_extra`).
 */
const OTHER_TOOLS_ROUTE_KEYS: Readonly<Record<string, string>> = {
  event_types: "write events (a list: events: [push, pull_request])",
  event_type: "write events (a list: events: [push, pull_request])",
  template: "write prompt (a {dot.path} template)",
  message: "write prompt (a {dot.path} template)",
  target: "write deliver (the delivery target: log, telegram, ...)",
  deliver_to: "write deliver (the delivery target: log, telegram, ...)",
  destination: "write deliver (the delivery target: log, telegram, ...)",
  chat_id: TARGET_KEY("chat_id"),
  thread_id: TARGET_KEY("thread_id"),
  message_thread_id: TARGET_KEY("message_thread_id"),
  repo: TARGET_KEY("repo"),
  pr_number: TARGET_KEY("pr_number"),
  channel: "a chat's channel is its chat_id: put it under deliver_extra (deliver_extra: {chat_id: ...})",
  token: ROUTE_SECRET_KEY,
  hmac_secret: ROUTE_SECRET_KEY,
  signing_secret: ROUTE_SECRET_KEY,
  webhook_secret: ROUTE_SECRET_KEY,
  extra: "write deliver_extra (the delivery target's keys)",
  cron: "write cron_job (the cron job's id or name)",
  job: "write cron_job (the cron job's id or name)",
  debounce: "write coalesce (coalesce: {key: <payload path>, window_seconds: 30})",
  mirror: "write mirror_to_session",
  only_deliver: "write deliver_only: true",
  direct: "write deliver_only: true",
  path: NO_PATH_KEY,
  url: NO_PATH_KEY,
};

const NO_EVENT_CAP =
  "coalesce has no cap on a group's events: a group runs once, with its latest event, when its quiet window (window_seconds) or its max_wait_seconds ends — lower max_wait_seconds for a busy key to run sooner";
const QUIET_KEY = "write window_seconds (the quiet window: a group fires once no event came for that long)";
const GROUP_KEY = "write key (the payload path or {template} that names a group)";

/**
 * `coalesce` settings as other batching and debouncing tools name them, too far from svc's for a
 * did-you-mean: spelled right, so "check the spelling" would mislead (`max_events` is no svc setting).
 */
const OTHER_TOOLS_COALESCE_KEYS: Readonly<Record<string, string>> = {
  max_events: NO_EVENT_CAP,
  max_count: NO_EVENT_CAP,
  max_items: NO_EVENT_CAP,
  max_size: NO_EVENT_CAP,
  max_batch_size: NO_EVENT_CAP,
  batch_size: NO_EVENT_CAP,
  debounce: QUIET_KEY,
  debounce_seconds: QUIET_KEY,
  delay: QUIET_KEY,
  delay_seconds: QUIET_KEY,
  quiet_seconds: QUIET_KEY,
  group_by: GROUP_KEY,
  group_key: GROUP_KEY,
  key_template: GROUP_KEY,
  by: GROUP_KEY,
};

const BIND_KEY = "write host (the bind address: 127.0.0.1, or 0.0.0.0 for every interface)";
const BODY_KEY = "write max_body_bytes (the largest body, in bytes)";
const RATE_KEY = "write rate_limit (requests per minute, counted per route)";
const GLOBAL_SECRET_KEY = "write secret (the global secret of the routes without their own)";

/** `platforms.webhook` settings as other webhook servers and relays name them: what svc reads instead. */
const OTHER_TOOLS_WEBHOOK_KEYS: Readonly<Record<string, string>> = {
  bind: BIND_KEY,
  bind_address: BIND_KEY,
  address: BIND_KEY,
  hostname: BIND_KEY,
  listen: "write host and port (host: 127.0.0.1, port: 8644)",
  max_body_size: BODY_KEY,
  body_limit: BODY_KEY,
  max_request_size: BODY_KEY,
  client_max_size: BODY_KEY,
  requests_per_minute: RATE_KEY,
  rate: RATE_KEY,
  rate_limit_per_minute: RATE_KEY,
  rpm: RATE_KEY,
  timeout:
    "a route script's time is script_timeout_seconds, an agent run's agent.timeout_seconds (svc has no request timeout)",
  webhook_secret: GLOBAL_SECRET_KEY,
  hmac_secret: GLOBAL_SECRET_KEY,
  signing_secret: GLOBAL_SECRET_KEY,
  token: GLOBAL_SECRET_KEY,
  server: "write http_server (uws or node)",
  threads: "write workers (ingress threads of the uWS server)",
};

/**
 * `endpoints: {github: {secret: ...}}` under platforms.webhook: a mapping of routes under another name than
 * `routes` (each value a mapping, none of its keys a route property), not one route missing its `routes:` level.
 */
function holdsRoutes(mapping: Record<string, unknown>): boolean {
  const entries = Object.entries(mapping);
  return (
    entries.length > 0 &&
    entries.every(
      ([name, entry]) =>
        !Object.hasOwn(routeShape, name) &&
        (entry === null || (typeof entry === "object" && !Array.isArray(entry))),
    )
  );
}

/** A version field other tools' files carry at their top level; config.yaml has none. */
const VERSION_KEYS: readonly string[] = ["version", "config_version", "schema_version"];

/**
 * Settings other delivery platforms have that these two have not (`<platform>.<key>`): spelled right, so
 * "check the spelling" would mislead. forge_comment's `home_channel` was once accepted and never read.
 */
const KEYS_A_PLATFORM_HAS_NOT: Record<string, string> = {
  "email.base_url":
    "email takes no base_url: it connects to the SMTP server named by host (and port, secure)",
  "forge_comment.base_url":
    "forge_comment takes no base_url: gh reaches GitHub itself (for a GitHub Enterprise Server, write its host in deliver_extra.repo, host/owner/name, or set GH_HOST)",
  "forge_comment.home_channel":
    "forge_comment has no home channel: a comment goes to the pull request the route's deliver_extra.repo and pr_number name",
};
for (const key of ["base_url", "home_channel"])
  KEYS_A_PLATFORM_HAS_NOT[`github_comment.${key}`] = KEYS_A_PLATFORM_HAS_NOT[
    `forge_comment.${key}`
  ] as string;

/**
 * Where an unknown key belongs instead: another section's key (`multiplex_profiles` under
 * `platforms.webhook` is `gateway.multiplex_profiles`), or, directly under `platforms.webhook`, a
 * mapping that reads as a route written without the `routes:` level.
 */
export function elsewhere(path: readonly PropertyKey[], key: string, input: unknown): string | undefined {
  const at = path.map(String);
  // Profiles written as a section: a profile is a directory, and a route names the one it runs as.
  if (at.length === 0 && (key === "profiles" || key === "profile"))
    return "config.yaml has no profiles section: a profile is its directory, <SVC_HOME>/profiles/<name>/ (its scripts, skills, cron jobs, MCP tokens and .env), made with mkdir; a route runs as one with profile: <name> among its keys";
  // Cron jobs written as a section: they live in the profile's cron store, which svc cron edits.
  if (at.length === 0 && (key === "cron" || key === "cron_jobs"))
    return "config.yaml has no cron section: cron jobs are kept in <SVC_HOME>/cron/jobs.json (a profile's in <SVC_HOME>/profiles/<name>/cron/jobs.json), made with svc cron create --name <name> --schedule <expr> --prompt <text>; a route fires one with cron_job: <job name> among its keys";
  // `version: "3"` as docker compose files begin, or a schema version: the file has none to spell right.
  if (at.length === 0 && VERSION_KEYS.includes(key))
    return "config.yaml has no version field: every version of svc reads the file as it is, and names a key it does not know (a newer version's setting) as unknown — remove the line";
  // `x-base: &base {...}`, docker compose's extension field holding an anchor for the routes below.
  if (at.length === 0 && key.startsWith("x-"))
    return "config.yaml has no extension keys (docker compose's x-...): put the anchor on the first route that uses it (routes: {a: &base {...}, b: {<<: *base, ...}})";
  if (at.length === 0 && Object.hasOwn(HOME_OF_TOP_LEVEL_KEY, key)) {
    const home = HOME_OF_TOP_LEVEL_KEY[key];
    return `it belongs under ${home} (${home}.${key})`;
  }
  if (at.length === 1 && at[0] === "agent" && Object.hasOwn(OTHER_TOOLS_AGENT_KEYS, key))
    return OTHER_TOOLS_AGENT_KEYS[key];
  if (
    at.length === 3 &&
    at[0] === "mcp_servers" &&
    at[2] === "oauth" &&
    Object.hasOwn(OTHER_CLIENTS_OAUTH_KEYS, key)
  )
    return OTHER_CLIENTS_OAUTH_KEYS[key];
  // A server entry's own key written inside its `lifecycle:` mapping (`keepalive_interval`, `lazy`), which
  // holds the two recycling keys only: spelled right, so "check the spelling" would send the user astray.
  if (
    at.length === 3 &&
    at[0] === "mcp_servers" &&
    at[2] === "lifecycle" &&
    key !== "lifecycle" &&
    MCP_ENTRY_KEYS.includes(key)
  )
    return `it belongs in the server entry itself (mcp_servers.${at[1]}.${key}); lifecycle holds only idle_timeout_seconds and max_lifetime_seconds`;
  // Written among the tools' settings or an MCP server's: it holds every tool's result in a model run.
  if (key === "max_tool_result_chars" && (at[0] === "tools" || at[0] === "mcp_servers"))
    return `it belongs under agent (agent.${key})`;
  if (at.length === 2 && at[0] === "platforms" && Object.hasOwn(KEYS_A_PLATFORM_HAS_NOT, `${at[1]}.${key}`))
    return KEYS_A_PLATFORM_HAS_NOT[`${at[1]}.${key}`];
  if (at[0] !== undefined && !["gateway", "agent", "platforms"].includes(at[0])) return undefined;
  const atRoute =
    at[0] === "platforms" &&
    at[1] === "webhook" &&
    at.at(-2) === "routes" &&
    at.length === (at[2] === "extra" ? 5 : 4);
  if (atRoute && Object.hasOwn(SUBSCRIPTION_ONLY, key)) return SUBSCRIPTION_ONLY[key];
  const atCoalesce =
    at[0] === "platforms" &&
    at[1] === "webhook" &&
    at.at(-1) === "coalesce" &&
    at.at(-3) === "routes" &&
    at.length === (at[2] === "extra" ? 6 : 5);
  if (atCoalesce && Object.hasOwn(OTHER_TOOLS_COALESCE_KEYS, key)) return OTHER_TOOLS_COALESCE_KEYS[key];
  if (atRoute && Object.hasOwn(OTHER_TOOLS_ROUTE_KEYS, key)) return OTHER_TOOLS_ROUTE_KEYS[key];
  if (
    at[0] === "platforms" &&
    at[1] === "webhook" &&
    (at.length === 2 || (at.length === 3 && at[2] === "extra"))
  ) {
    if (Object.hasOwn(OTHER_TOOLS_WEBHOOK_KEYS, key)) return OTHER_TOOLS_WEBHOOK_KEYS[key];
    const value =
      typeof input === "object" && input !== null ? (input as Record<string, unknown>)[key] : undefined;
    if (
      typeof value === "object" &&
      value !== null &&
      !Array.isArray(value) &&
      !Object.hasOwn(HOME_OF_KEY, key)
    )
      return holdsRoutes(value as Record<string, unknown>)
        ? `it holds routes: write routes (routes: {<name>: {...}}, each answering at /webhooks/<name>)`
        : `a route goes under platforms.webhook.routes (routes: {${key}: ...})`;
  }
  const home = Object.hasOwn(HOME_OF_KEY, key) ? HOME_OF_KEY[key] : undefined;
  if (home === undefined) return undefined;
  const here = at.join(".");
  if (here === home || (home.endsWith("<name>") && at.length === 4 && at[2] === "routes")) return undefined;
  return `it belongs under ${home} (${home}.${key})`;
}

const EXCLUDE_HINT = "write tools: {exclude: [...]} (the server's own tool names, or globs)";
const INCLUDE_HINT = "write tools: {include: [...]} (the server's own tool names, or globs)";

/**
 * Keys other MCP clients write in a server entry (Claude Desktop, Cline, Roo Code, Windsurf, VS Code,
 * Gemini CLI, and Codex, whose config.toml names its table mcp_servers too), pasted into `mcp_servers`:
 * what svc reads instead.
 */
const OTHER_CLIENTS_MCP_KEYS: Readonly<Record<string, string>> = {
  httpUrl: "write url",
  disabledTools: EXCLUDE_HINT,
  excludeTools: EXCLUDE_HINT,
  disabled_tools: EXCLUDE_HINT,
  includeTools: INCLUDE_HINT,
  enabled_tools: INCLUDE_HINT,
  startup_timeout_sec: "write connect_timeout (seconds)",
  tool_timeout_sec: "write timeout (seconds)",
  timeout_seconds: "write timeout (seconds per tool call)",
  request_timeout: "write timeout (seconds per tool call)",
  connect_timeout_seconds: "write connect_timeout (seconds)",
  trust_level: "write trust: full or trust: untrusted",
  trusted: "write trust: full (or trust: untrusted)",
  http_headers: "write headers",
  env_http_headers:
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
    'write headers with each value as a variable: headers: {X-Api-Key: "${NAME}"}, NAME in the profile\'s .env',
  bearer_token_env_var:
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
    'write headers: {Authorization: "Bearer ${NAME}"}, with NAME in the profile\'s .env or the environment',
  env_vars:
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
    'pass each variable as env: {NAME: "${NAME}"} (a stdio server gets only its env and a few basics)',
  disabled: "write enabled: false for disabled: true (or remove it)",
  serverUrl: "write url",
  transportType: "write transport",
  cwd: "svc has no cwd: a stdio server starts in the gateway's working directory — give absolute paths in command and args, or a wrapper script that changes directory",
  envFile:
    'svc has no envFile: put the variables in the profile\'s .env and pass each one as env: {NAME: "${NAME}"}',
  alwaysAllow: "svc has no per-tool approval list: trust: full (the default) runs every tool without asking",
  autoApprove: "svc has no per-tool approval list: trust: full (the default) runs every tool without asking",
};

/** An `mcp_servers.<name>` entry's unknown keys that are other clients' keys, each with what to write instead. */
export function otherClientsKeys(
  path: readonly PropertyKey[],
  keys: readonly string[],
  known: readonly string[],
): string | undefined {
  if (path[0] !== "mcp_servers" || path.length !== 2) return undefined;
  const hints = keys.filter((key) => Object.hasOwn(OTHER_CLIENTS_MCP_KEYS, key));
  if (hints.length === 0) return undefined;
  // A misspelling beside them (`timout`) still gets its did-you-mean.
  const others = keys.filter((key) => !hints.includes(key));
  const meant = others.flatMap((key) => {
    const match = nearMiss(key, known);
    return match === undefined || keys.includes(match) ? [] : [`"${key}": did you mean "${match}"?`];
  });
  const unmatched = others.filter((key) => !meant.some((m) => m.startsWith(`"${key}":`)));
  return [
    ...hints.map((key) => `${key}: ${OTHER_CLIENTS_MCP_KEYS[key]}`),
    ...meant,
    ...(unmatched.length === 0 ? [] : [`${unmatched.map((k) => `"${k}"`).join(", ")}: check the spelling`]),
  ].join("; ");
}
