import { type InterpolationScope, lookedUpVariables, variableValue } from "./interpolate.js";
import type { Config } from "./schema.js";
import { settingKey } from "./sections/webhook.js";

const usesRedis = (config: Config) => config.state.backend === "redis";

/**
 * Settings a SIGHUP reload cannot apply (the listener, the run slots, MCP approvals and the state backend are
 * built once), each with, where it has one, when the re-read file gives it an effect at all: a restart
 * applies no Redis setting with `state.backend: local`, and no `workers` with `http_server: node` (both
 * named at WARN as unused already), so a change of them alone is no change a restart would make.
 */
const RESTART_ONLY: ReadonlyArray<
  readonly [string, (config: Config) => unknown, ((config: Config) => boolean)?]
> = [
  ["platforms.webhook.enabled", (c) => c.platforms.webhook.enabled],
  ["platforms.webhook.host", (c) => c.platforms.webhook.host],
  ["platforms.webhook.port", (c) => c.platforms.webhook.port],
  ["platforms.webhook.http_server", (c) => c.platforms.webhook.http_server],
  [
    "platforms.webhook.workers",
    (c) => c.platforms.webhook.workers,
    (c) => c.platforms.webhook.http_server !== "node",
  ],
  ["platforms.webhook.metrics", (c) => c.platforms.webhook.metrics],
  ["platforms.webhook.delivery_history", (c) => c.platforms.webhook.delivery_history],
  ["agent.max_concurrent_runs", (c) => c.agent.max_concurrent_runs],
  ["gateway.approvals", (c) => c.gateway.approvals],
  // The state backend (journal or Redis connection) is opened once, at start.
  ["state.backend", (c) => c.state.backend],
  ["state.redis_url", (c) => c.state.redis_url, usesRedis],
  ["state.redis_key_prefix", (c) => c.state.redis_key_prefix, usesRedis],
];

/**
 * The restart-only keys whose value differs between the running and the re-read configuration. Keys in
 * `overridden` (`platforms.webhook.host` / `port` when `--host` / `--port` was given) are left out: a
 * restart with the same command would not apply the file's value either.
 */
export function restartOnlyChanges(
  running: Config,
  next: Config,
  overridden: ReadonlySet<string> = new Set(),
): string[] {
  return RESTART_ONLY.filter(
    ([key, read, used]) =>
      !overridden.has(key) && read(running) !== read(next) && (used === undefined || used(next)),
  ).map(([key]) => writtenAt(key, next, running));
}

/** A `platforms.webhook` key as written: under `extra` when the re-read (or running) file has it there. */
function writtenAt(key: string, ...configs: readonly Config[]): string {
  const setting = /^platforms\.webhook\.(.+)$/.exec(key)?.[1];
  if (setting === undefined) return key;
  return (
    configs.map((config) => settingKey(config.platforms.webhook, setting)).find((at) => at !== key) ?? key
  );
}

/** The restart-only keys a `WEBHOOK_*` variable overrides (from the environment or `.env`). */
const VARIABLE_OF: Readonly<Record<string, string>> = {
  "platforms.webhook.enabled": "WEBHOOK_ENABLED",
  "platforms.webhook.port": "WEBHOOK_PORT",
  "platforms.webhook.extra.enabled": "WEBHOOK_ENABLED",
  "platforms.webhook.extra.port": "WEBHOOK_PORT",
};

/** The value of `key` (a dotted path, as `restartOnlyChanges` names it) in config.yaml as written. */
function writtenValue(written: unknown, key: string): unknown {
  let at = written;
  for (const part of key.split(".")) {
    if (at === null || typeof at !== "object" || Array.isArray(at)) return undefined;
    at = Object.hasOwn(at, part) ? (at as Record<string, unknown>)[part] : undefined;
  }
  return at;
}

/** The names every `${...}` of a written value (its strings, at any depth) looks up, once each in order. */
function variablesOf(value: unknown): string[] {
  if (typeof value === "string") return lookedUpVariables(value);
  if (value === null || typeof value !== "object") return [];
  return [...new Set(Object.values(value).flatMap(variablesOf))];
}

/**
 * The `${VAR}` names through which the re-read file's text of `key` takes its value: those whose value
 * differs between the scopes (an edit of `.env` or the environment), else all of them (the text changed).
 */
function fromVariables(
  key: string,
  written: unknown,
  scopes: ReadonlyArray<Pick<InterpolationScope, "secrets" | "env">>,
): string[] {
  const names = variablesOf(writtenValue(written, key));
  const changed = names.filter((name) => new Set(scopes.map((s) => variableValue(name, s))).size > 1);
  return changed.length > 0 ? changed : names;
}

/**
 * The changed keys as a reload's WARN names them: one a `WEBHOOK_*` variable decides (set, not empty, in
 * the running or the re-read scope) names that variable too, since config.yaml may not have changed at all;
 * one the re-read file (`written`, config.yaml before its `${VAR}` are rendered) writes with `${VAR}` names
 * those variables (`(from ${REDIS_URL})`), never their values, which may be secrets.
 */
export function describeRestartKeys(
  keys: readonly string[],
  scopes: ReadonlyArray<{
    readonly secrets: Readonly<Record<string, string>>;
    readonly env: Readonly<Record<string, string | undefined>>;
  }>,
  written?: unknown,
): string {
  return keys
    .map((key) => {
      const variable = VARIABLE_OF[key];
      const set =
        variable !== undefined &&
        scopes.some((s) => (s.env[variable]?.trim() || s.secrets[variable]?.trim() || "") !== "");
      if (set) return `${key} (set by ${variable})`;
      const from = fromVariables(key, written, scopes);
      return from.length > 0 ? `${key} (from ${from.map((name) => `\${${name}}`).join(", ")})` : key;
    })
    .join(", ");
}
