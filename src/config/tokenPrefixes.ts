import type { Config } from "./schema.js";

/** The platforms whose `token` svc sends as `Authorization: Bearer <token>`. */
const BEARER_PLATFORMS = ["slack", "whatsapp", "matrix", "mattermost", "home_automation"] as const;

/** A Bot API token as @BotFather gives it: the bot's id, a colon, then the secret. */
const TELEGRAM_TOKEN = /^\d+:[A-Za-z0-9_-]+$/;

/** A `${VAR}` or `$VAR` still in the value: named by unsetPlatformVariables.ts, not judged here. */
const VARIABLE_LEFT = /\$\{|^\$[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * A token pasted with the prefix svc puts before it itself: Telegram's `bot` (its path is `/bot<token>/`), an
 * Authorization header's `Bot ` or `Bearer `. Every request then fails with an answer that does not say why
 * (Telegram's 404 Not Found for `/botbot123:…`, Discord's 401 for `Bot Bot …`), so it is named at start, on
 * reload and by `svc config check`. So is a Telegram token of another shape than `<bot id>:<secret>`, which
 * the Bot API answers 404 Not Found too. The value the platform gets is judged (a `${VAR}` from `.env`
 * included) and never quoted; only the prefix is. Only enabled platforms are read.
 */
export function tokenPrefixWarnings(config: Config, file: string): string[] {
  const warnings: string[] = [];
  const tokenOf = (settings: { enabled?: boolean; token?: string | undefined } | undefined) =>
    settings?.enabled === true && settings.token !== undefined && !VARIABLE_LEFT.test(settings.token)
      ? settings.token
      : undefined;
  const warn = (key: string, problem: string) => warnings.push(`[delivery] ${file}: ${key}: ${problem}`);

  const telegram = tokenOf(config.platforms.telegram);
  if (telegram !== undefined && /^bot/i.test(telegram))
    warn(
      "platforms.telegram.token",
      `starts with "bot" — svc adds the prefix itself (its requests go to /bot<token>/...): write the token without it, as @BotFather gives it (<bot id>:<secret>); as written, Telegram answers every request 404 Not Found`,
    );
  else if (telegram !== undefined && !TELEGRAM_TOKEN.test(telegram))
    warn(
      "platforms.telegram.token",
      "is not shaped as a Telegram bot token, <bot id>:<secret> (digits, a colon, then letters, digits, - and _) — copy it again from @BotFather (/mybots → the bot → API Token); Telegram answers a malformed token 404 Not Found",
    );

  const discord = tokenOf(config.platforms.discord);
  if (discord !== undefined && /^Bot\s/i.test(discord))
    warn(
      "platforms.discord.token",
      `starts with "Bot " — svc adds the prefix itself (Authorization: Bot <token>): write the token without it; as written, Discord refuses every request (401 Unauthorized)`,
    );

  for (const platform of BEARER_PLATFORMS) {
    const token = tokenOf(config.platforms[platform]);
    if (token !== undefined && /^Bearer\s/i.test(token))
      warn(
        `platforms.${platform}.token`,
        `starts with "Bearer " — svc adds the prefix itself (Authorization: Bearer <token>): write the token without it; as written, ${platform} refuses every request as unauthorized`,
      );
  }
  return warnings;
}
