import { dirname, join } from "node:path";
import { unsetVariablesIn } from "./interpolate.js";
import type { Config } from "./schema.js";

const BARE_VARIABLE = /^\$[A-Za-z_][A-Za-z0-9_]*$/;

/** One warning per string setting of `settings` that holds unset variables, named `<at>.<key>` (`<at>[<i>]` in a list). */
function unsetIn(settings: object, at: string, sentTo: string, file: string): string[] {
  const envFile = join(dirname(file), ".env");
  const warnings: string[] = [];
  const entries = Array.isArray(settings)
    ? settings.map((value, i) => [`[${i}]`, value] as const)
    : Object.entries(settings).map(([key, value]) => [`.${key}`, value] as const);
  // (A route's prompt and deliver_extra are left out: `Paid ${amount}` there is often payload text.)
  for (const [key, value] of entries) {
    if (typeof value !== "string") continue;
    // `token: $TELEGRAM_BOT_TOKEN` as a shell writes it: not replaced either. The value is not quoted.
    if (BARE_VARIABLE.test(value)) {
      warnings.push(
        `${file}: ${at}${key}: a $ followed by a name is how a shell writes a variable, but svc replaces only \${NAME} (with braces), so this text itself is sent to ${sentTo} — write it as \${NAME}, in quotes`,
      );
      continue;
    }
    const unset = unsetVariablesIn(value);
    if (unset.length === 0) continue;
    const one = unset.length === 1;
    warnings.push(
      `${file}: ${at}${key}: ${unset.map((n) => `\${${n}}`).join(", ")} ${one ? "is" : "are"} not set — set ${unset.join(", ")} in ${envFile} or the environment; until then ${one ? "its" : "their"} literal text is used (sent to ${sentTo} as written)`,
    );
  }
  return warnings;
}

/**
 * A delivery platform's, the search backend's or a `command` agent's settings with a `${VAR}` that
 * nothing sets (`token:
 * ${TELEGRAM_BOT_TOKEN}` before the token is in `.env`): its literal text would be sent as the token, and
 * the service's answer ("401 Unauthorized", "404 Not Found") would not say why. Named at start and by
 * `svc config check`, never with a value. Only enabled platforms (and `forge_comment`, available unless
 * `enabled: false`) are read.
 */
export function unsetPlatformVariableWarnings(config: Config, file: string): string[] {
  const warnings: string[] = [];
  for (const [name, settings] of Object.entries(config.platforms)) {
    if (name === "webhook" || typeof settings !== "object" || settings === null) continue;
    const enabled = (settings as { enabled?: boolean }).enabled;
    if (enabled === false || (enabled === undefined && name !== "forge_comment")) continue;
    warnings.push(...unsetIn(settings, `platforms.${name}`, name, file).map((w) => `[delivery] ${w}`));
  }
  const { agent } = config;
  if (agent.provider === "command" && agent.command !== undefined)
    warnings.push(
      ...unsetIn(agent.command, "agent.command", "the agent's process", file).map((w) => `[agent] ${w}`),
    );
  const search = config.tools?.web_search;
  if (search !== undefined) {
    // SearXNG takes no key: its api_key is never sent (unusedSettings.ts names it as unused instead).
    const { api_key, ...keyless } = search;
    const sent = search.backend === "searxng" ? keyless : search;
    warnings.push(
      ...unsetIn(sent, "tools.web_search", `the ${search.backend} backend`, file).map((w) => `[agent] ${w}`),
    );
  }
  return warnings;
}
