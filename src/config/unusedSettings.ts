import type { Config } from "./schema.js";

/** The optional `agent` keys each provider reads (the others have defaults and are not checked). */
const AGENT_KEYS_USED: Record<string, readonly string[]> = {
  echo: [],
  command: ["command"],
  openai: ["model", "base_url", "api_key", "system_prompt"],
  anthropic: ["model", "base_url", "api_key", "system_prompt"],
};
const AGENT_OPTIONAL_KEYS = ["command", "model", "base_url", "api_key", "system_prompt"] as const;

/**
 * Settings written out that the rest of the configuration leaves unused: `agent.command` under the echo
 * provider (a forgotten `provider: command`), `state.redis_url` with the local backend. The gateway runs
 * without them, so it says so at start rather than dropping them without a word.
 */
export function unusedSettingWarnings(config: Config, file: string): string[] {
  const warnings: string[] = [];
  const { agent, state } = config;
  const used = AGENT_KEYS_USED[agent.provider] ?? [];
  const unused = AGENT_OPTIONAL_KEYS.filter((key) => agent[key] !== undefined && !used.includes(key));
  if (unused.length > 0) {
    const keys = unused.map((key) => `agent.${key}`).join(", ");
    const fix = unused.includes("command")
      ? "set agent.provider: command to run agent.command"
      : "set agent.provider: openai or anthropic to run a model";
    warnings.push(
      `[agent] ${file}: agent.provider is ${agent.provider}, which does not use ${keys} — ${fix}, or remove ${unused.length === 1 ? "it" : "them"}`,
    );
  }
  const redisKeys = (["redis_url", "redis_key_prefix"] as const).filter((key) => state[key] !== undefined);
  if (state.backend !== "redis" && redisKeys.length > 0)
    warnings.push(
      `[state] ${file}: ${redisKeys.map((key) => `state.${key}`).join(" and ")} ${redisKeys.length === 1 ? "is" : "are"} set, but state.backend is ${state.backend}: Redis is not used — set state.backend: redis to share state between gateways, or remove ${redisKeys.length === 1 ? "it" : "them"}`,
    );
  return warnings;
}
