import type { Config } from "./schema.js";

/** Settings a SIGHUP reload cannot apply (the listener, the run slots, MCP approvals and the state backend are built once). */
const RESTART_ONLY: ReadonlyArray<readonly [string, (config: Config) => unknown]> = [
  ["platforms.webhook.enabled", (c) => c.platforms.webhook.enabled],
  ["platforms.webhook.host", (c) => c.platforms.webhook.host],
  ["platforms.webhook.port", (c) => c.platforms.webhook.port],
  ["platforms.webhook.http_server", (c) => c.platforms.webhook.http_server],
  ["platforms.webhook.workers", (c) => c.platforms.webhook.workers],
  ["platforms.webhook.metrics", (c) => c.platforms.webhook.metrics],
  ["platforms.webhook.delivery_history", (c) => c.platforms.webhook.delivery_history],
  ["agent.max_concurrent_runs", (c) => c.agent.max_concurrent_runs],
  ["gateway.approvals", (c) => c.gateway.approvals],
  // The state backend (journal or Redis connection) is opened once, at start.
  ["state.backend", (c) => c.state.backend],
  ["state.redis_url", (c) => c.state.redis_url],
  ["state.redis_key_prefix", (c) => c.state.redis_key_prefix],
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
  return RESTART_ONLY.filter(([key, read]) => !overridden.has(key) && read(running) !== read(next)).map(
    ([key]) => key,
  );
}
