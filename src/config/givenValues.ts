import { describe, WrittenAs } from "./describe.js";
import { lookedUpVariables } from "./interpolate.js";

/**
 * The values of a loaded configuration that a `${VAR}` gave, by the mapping (or list) that holds them and
 * their key, as the file writes them: the checks run after the schema (the startup rules, `svc config check`'s
 * host) quote such a value as `describe(givenBy(route, "deliver") ?? route.deliver)` says it, never what `.env`
 * or the environment put there (secrets live there). Keyed by the parsed objects themselves, so it never shows
 * in their keys or equality; a copy made with another value for a key (`withHost`) takes the others with
 * `keepGiven`.
 */
const GIVEN = new WeakMap<object, Map<string, WrittenAs>>();
/** The values `.env` gave those text values (each one's `${VAR}`s that `.env` sets), by holder and key. */
const FROM_DOTENV = new WeakMap<object, Map<string, readonly string[]>>();

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * `platforms.webhook` as the schema reads it: its keys under `extra` over the direct ones, and routes merged
 * by name, the one under `extra` winning (sections/webhook.ts).
 */
function webhookAsRead(webhook: unknown): unknown {
  if (!isMapping(webhook) || !isMapping(webhook.extra)) return webhook;
  const { extra, ...direct } = webhook;
  const merged: Record<string, unknown> = { ...direct, ...extra };
  if (isMapping(direct.routes) && isMapping(extra.routes))
    merged.routes = { ...direct.routes, ...extra.routes };
  return merged;
}

/**
 * `platforms` as the schema reads it: a platform written under an alias (`chat_1:`, `github_comment:`) is
 * read under the name it stands for (`aliases`, sections/platforms.ts's PLATFORM_ALIASES), and the webhook
 * as `webhookAsRead` says.
 */
function platformsAsRead(
  platforms: Record<string, unknown>,
  aliases: Readonly<Record<string, string>>,
): Record<string, unknown> {
  const read: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(platforms))
    read[Object.hasOwn(aliases, key) ? (aliases[key] as string) : key] = value;
  return { ...read, webhook: webhookAsRead(platforms.webhook) };
}

/**
 * Notes, on each mapping and list of `parsed` (a configuration the schema made), which of its text values
 * the file (`written`, config.yaml as written, before any `${VAR}` was replaced) writes with a `${...}`, and
 * the values `dotenv` (the `.env` they were rendered with) gave them; `aliases` are the other names a
 * platform may be written under (PLATFORM_ALIASES).
 */
export function noteGivenValues(
  parsed: object,
  written: unknown,
  aliases: Readonly<Record<string, string>>,
  dotenv: Readonly<Record<string, string>> = {},
): void {
  const platforms = isMapping(written) ? written.platforms : undefined;
  note(
    parsed,
    isMapping(written) && isMapping(platforms)
      ? { ...written, platforms: platformsAsRead(platforms, aliases) }
      : written,
    dotenv,
  );
}

function note(parsed: unknown, written: unknown, dotenv: Readonly<Record<string, string>>): void {
  if (typeof parsed !== "object" || parsed === null) return;
  // `filters` written as one mapping is read as a list of that one filter.
  const at = Array.isArray(parsed) && isMapping(written) ? [written] : written;
  if (typeof at !== "object" || at === null) return;
  for (const [key, value] of Object.entries(parsed)) {
    if (!Object.hasOwn(at, key)) continue;
    const text = (at as Record<string, unknown>)[key];
    if (typeof value === "object") note(value, text, dotenv);
    else if (typeof text === "string" && text.includes("${")) {
      const given = GIVEN.get(parsed) ?? new Map<string, WrittenAs>();
      given.set(key, new WrittenAs(text));
      GIVEN.set(parsed, given);
      const values = lookedUpVariables(text).flatMap((name) =>
        Object.hasOwn(dotenv, name) ? [dotenv[name] as string] : [],
      );
      if (values.length === 0) continue;
      const fromDotenv = FROM_DOTENV.get(parsed) ?? new Map<string, readonly string[]>();
      fromDotenv.set(key, values);
      FROM_DOTENV.set(parsed, fromDotenv);
    }
  }
}

/** The file's text for `holder[key]` when a `${VAR}` gave that value (noteGivenValues), else undefined. */
export function givenBy(holder: object | undefined, key: string | number): WrittenAs | undefined {
  return holder === undefined ? undefined : GIVEN.get(holder)?.get(String(key));
}

/**
 * The values `.env` gave to `holder[key]` (noteGivenValues): none when no `${VAR}` there is set in `.env`. A
 * message about a setting names it as written where it knows its place, and hides these wherever else its words
 * (a server's, a library's) may quote them.
 */
export function dotenvValuesAt(holder: object | undefined, key: string): readonly string[] {
  return (holder === undefined ? undefined : FROM_DOTENV.get(holder)?.get(key)) ?? [];
}

/** Notes on `copy` what `noteGivenValues` noted on `original`, but for the keys given another value. */
export function keepGiven<T extends object>(original: object, copy: T, except: readonly string[] = []): T {
  const given = GIVEN.get(original);
  if (given !== undefined) GIVEN.set(copy, new Map([...given].filter(([key]) => !except.includes(key))));
  const fromDotenv = FROM_DOTENV.get(original);
  if (fromDotenv !== undefined)
    FROM_DOTENV.set(copy, new Map([...fromDotenv].filter(([key]) => !except.includes(key))));
  return copy;
}

/**
 * `holder[key]` (`value`, a text) as a message names it: as the file writes it, through `describe`, when a
 * `${VAR}` gave it (`"${SIGNAL_NUMBER}" (the value it gives is not shown)`), else `plain(value)`.
 */
export function shownValue(
  holder: object | undefined,
  key: string | number,
  value: string,
  plain: (value: string) => string = (text) => text,
): string {
  const given = givenBy(holder, key);
  return given === undefined ? plain(value) : describe(given);
}
