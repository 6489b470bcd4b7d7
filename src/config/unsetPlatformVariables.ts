import { dirname, join } from "node:path";
import { RECIPIENT_KEYS } from "../streams/recipientKeys.js";
import { asWritten } from "./asWritten.js";
import { CREDENTIAL_NAME } from "./credentialHeader.js";
import { envNameNearMiss } from "./envNearMiss.js";
import { filterKey } from "./filtersWrittenAsOne.js";
import { LITERAL_IN_SECRET, readsAsVariableName, unsetVariablesIn } from "./interpolate.js";
import type { Config } from "./schema.js";
import type { Filter } from "./sections/filters.js";
import { routeKey } from "./sections/webhook.js";
import { setInProfileEnv } from "./validate.js";

const BARE_VARIABLE = /^\$[A-Za-z_][A-Za-z0-9_]*$/;
/** `$HOME/notes`: a shell's variable at the start of a path. */
const ARGV_PATH_VARIABLE = /^\$[A-Za-z_][A-Za-z0-9_]*\//;

/** `[<key>, value]` for each entry of a list (`[<i>]`) or a mapping (`.<key>`). */
function keyed(settings: object): Array<readonly [string, unknown]> {
  return Array.isArray(settings)
    ? settings.map((value, i) => [`[${i}]`, value] as const)
    : Object.entries(settings).map(([key, value]) => [`.${key}`, value] as const);
}

/** One warning per string setting of `settings` that holds unset variables, named `<at>.<key>` (`<at>[<i>]` in a list). */
function unsetIn(settings: object, at: string, sentTo: string, file: string): string[] {
  return unsetInEntries(keyed(settings), at, file, `sent to ${sentTo} as written`, sentTo);
}

/**
 * What keeps a `${...}` in `value` as written though no unset variable does: a shell's form svc does not
 * read (`${TOKEN:?set it}`, `${TOKEN-x}`), another client's (`${input:token}`), or a `${TOKEN` whose `}` was
 * left out. Only the variable's name is quoted: the rest of the form may hold a secret (a fallback). Under a
 * credential key (`secret`), the name too only when it reads as a variable's (`TW_TOKEN`), never a run of
 * the credential's own characters (`password: Xy7${Tk9qLm2`).
 */
function unreadForm(value: string, secret: boolean): string | undefined {
  const quoted = (name: string) => !secret || readsAsVariableName(name);
  const other = /\$\{([^}]*)\}/.exec(value)?.[1];
  if (other !== undefined) {
    const name = /^\s*([A-Za-z_][A-Za-z0-9_]*)/.exec(other)?.[1];
    const shown = name !== undefined && (quoted(name) || other.startsWith("input:"));
    return `${shown ? `\${${name}...}` : "a $" + "{...}"} is not a variable form svc reads (it replaces \${NAME} and \${NAME:-fallback} only)`;
  }
  const unclosed = /\$\{((?:env:)?[A-Za-z_][A-Za-z0-9_]*)?/.exec(value);
  if (unclosed === null) return undefined;
  const name = unclosed[1];
  return `${name === undefined || !quoted(name) ? "a $" + "{" : `\${${name}`} has no closing }`;
}

/**
 * `unsetIn` over `[<key>, value]` entries; `effect` says what the literal text then does. Given `sentTo`, a
 * bare `$NAME` (a shell's variable) and a `${...}` form svc does not read (`unreadForm`) are named too.
 */
function unsetInEntries(
  entries: Iterable<readonly [string, unknown]>,
  at: string,
  file: string,
  effect: string,
  sentTo?: string,
  /** The route's profile: a named one whose own `.env` sets the variable is told that it serves only its MCP connections. */
  profile?: string,
): string[] {
  const envFile = join(dirname(file), ".env");
  const warnings: string[] = [];
  for (const [key, value] of entries) {
    if (typeof value !== "string") continue;
    // `token: $TELEGRAM_BOT_TOKEN` as a shell writes it: not replaced either. The value is not quoted.
    // In an argv, `$HOME/notes` too: a path a shell would have expanded, passed on as written.
    const argvPath = at.startsWith("agent.command") && ARGV_PATH_VARIABLE.test(value);
    if (sentTo !== undefined && (BARE_VARIABLE.test(value) || argvPath)) {
      warnings.push(
        `${file}: ${at}${key}: a $ followed by a name is how a shell writes a variable, but svc replaces only \${NAME} (with braces), so this text itself is sent to ${sentTo} — write it as \${NAME}, in quotes`,
      );
      continue;
    }
    const unset = unsetVariablesIn(value);
    if (unset.length === 0) {
      const secret = CREDENTIAL_NAME.test(key);
      const unread = sentTo === undefined ? undefined : unreadForm(value, secret);
      if (unread !== undefined)
        warnings.push(
          `${file}: ${at}${key}: ${unread}, so this text itself is sent to ${sentTo} — write \${NAME} or \${NAME:-fallback}${secret && unread.startsWith("a $") ? LITERAL_IN_SECRET : ""}`,
        );
      continue;
    }
    const one = unset.length === 1;
    warnings.push(
      `${file}: ${at}${key}: ${unset.map((n) => `\${${n}}`).join(", ")} ${one ? "is" : "are"} not set — set ${unset.join(", ")} in ${envFile} or the environment${one ? envNameNearMiss(envFile, unset[0] as string) + setInProfileEnv(file, profile, unset[0] as string, envFile) : ""}; until then ${one ? "its" : "their"} literal text is used (${effect})`,
    );
  }
  return warnings;
}

/** The text values of a filter and the filters inside it, keyed by their path under the filter (`.any[1].equals`). */
function filterTexts(filter: Filter, at = ""): Array<readonly [string, unknown]> {
  if ("all" in filter) return filter.all.flatMap((inner, i) => filterTexts(inner, `${at}.all[${i}]`));
  if ("any" in filter) return filter.any.flatMap((inner, i) => filterTexts(inner, `${at}.any[${i}]`));
  if ("not" in filter) return filterTexts(filter.not, `${at}.not`);
  // `in_file` is left out: a path that names no file is named with the lists that cannot be read.
  return keyed(filter).flatMap(([key, value]) =>
    key === ".in_file"
      ? []
      : Array.isArray(value)
        ? keyed(value).map(([i, item]) => [`${at}${key}${i}`, item] as const)
        : [[`${at}${key}`, value] as const],
  );
}

/**
 * A config.yaml route's `events` entry or filter (`field`, a value to compare, a pattern) with a `${VAR}`
 * that nothing sets (`events: ["${DEPLOY_EVENT}"]`, `equals: ${REPO}` before the value is in `.env`): its
 * literal text is compared, which no event carries, so the route ignores its events (or, under `not_equals`
 * or `not`, lets them all through) without a word; so is a `deliver_extra` recipient (RECIPIENT_KEYS). A
 * route's `prompt`, its other `deliver_extra` values and `coalesce.key` are left out: `Paid ${amount}` there
 * is a `$` before the `{amount}` placeholder.
 */
export function unsetRouteVariableWarnings(config: Config, file: string): string[] {
  const warnings: string[] = [];
  // What config.yaml writes, never what a variable gave (`.env`'s `EV='a${B}'` is the text `a${B}`).
  for (const [name, route] of Object.entries(asWritten(config).platforms.webhook.routes)) {
    const at = routeKey(name, route);
    const recipients = Object.entries(route.deliver_extra ?? {}).filter(([key]) =>
      RECIPIENT_KEYS.includes(key),
    );
    // A `log` or `cron_job` route sends deliver_extra nowhere (named as unused elsewhere).
    if (recipients.length > 0 && route.deliver !== "log" && route.cron_job === undefined)
      warnings.push(
        ...unsetInEntries(
          recipients.map(([key, value]) => [`.${key}`, value] as const),
          `${at}.deliver_extra`,
          file,
          `sent to ${route.deliver} as written, which names no recipient`,
          undefined,
          route.profile,
        ),
      );
    if (route.events !== undefined)
      warnings.push(
        ...unsetInEntries(
          keyed(route.events),
          `${at}.events`,
          file,
          "no event's type is that text, so this entry never matches",
          undefined,
          route.profile,
        ),
      );
    for (const [i, filter] of (route.filters ?? []).entries()) {
      const texts = filterTexts(filter);
      const isField = ([key]: readonly [string, unknown]) => key.endsWith(".field");
      const effect = (what: string) => `${what}, so the filter does not decide as meant`;
      const filterAt = filterKey(`${at}.filters`, route.filters ?? [], i);
      warnings.push(
        ...unsetInEntries(
          texts.filter(isField),
          filterAt,
          file,
          effect("no event has a field of that name"),
          undefined,
          route.profile,
        ),
        ...unsetInEntries(
          texts.filter((entry) => !isField(entry)),
          filterAt,
          file,
          effect("no event holds that text"),
          undefined,
          route.profile,
        ),
      );
    }
  }
  return warnings.map((warning) => `[webhook] ${warning}`);
}

/**
 * A delivery platform's, the search backend's or a `command` agent's settings with a `${VAR}` that
 * nothing sets (`token:
 * ${TELEGRAM_BOT_TOKEN}` before the token is in `.env`): its literal text would be sent as the token, and
 * the service's answer ("401 Unauthorized", "404 Not Found") would not say why. Named at start and by
 * `svc config check`, never with a value. Only enabled platforms (and `forge_comment`, available unless
 * `enabled: false`) are read.
 */
export function unsetPlatformVariableWarnings(configured: Config, file: string): string[] {
  const warnings: string[] = [];
  // What config.yaml writes, never what a variable gave: a password from `.env` may hold `${` and is sent so.
  const config = asWritten(configured);
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
