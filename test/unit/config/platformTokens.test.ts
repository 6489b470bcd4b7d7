import { afterEach, describe, expect, it } from "vitest";
import { type LoadedConfig, loadConfig } from "../../../src/config/load.js";
import { unusedSettingWarnings } from "../../../src/config/unusedSettings.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

/**
 * A platform token pasted with a curly quote or a zero-width space passed the load and svc config check;
 * fetch then refused the header before any connection ("Cannot convert argument to a ByteString"), which
 * each delivery reported as a connection failure and retried three times, naming no key.
 */
let home: TempHome | undefined;
afterEach(() => {
  home?.cleanup();
  home = undefined;
});

function load(platform: string, token: string): unknown {
  home = tempHome();
  home.write("config.yaml", `platforms:\n  ${platform}: {enabled: true, token: '\${TOKEN}'}\n`);
  try {
    return loadConfig({ home: home.dir, env: { TOKEN: token } });
  } catch (err) {
    return err;
  }
}

describe("platform tokens", () => {
  it("a character outside printable ASCII is refused at load, naming the key, the character and the fix, never the token", () => {
    for (const [platform, token, code, at] of [
      ["mattermost", "abc-secret-1\u201d", "U+201D", 13],
      ["slack", "xoxb-secret-2\u200b", "U+200B", 14],
      ["telegram", "123:secret-3\n", "U+000A", 13],
    ] as const) {
      const error = load(platform, token);
      expect(error).toBeInstanceOf(Error);
      const message = (error as Error).message;
      expect(message).toContain(
        `config.yaml: platforms.${platform}.token: holds ${code} at character ${at}, which an HTTP request cannot carry — write the token again from the platform's page, printable ASCII only`,
      );
      expect(message).not.toContain(token.slice(0, -1));
    }
  });

  it("a printable ASCII token loads, spaces and punctuation included", () => {
    for (const platform of ["discord", "matrix", "home_automation"])
      expect(load(platform, "syt_a+b/c=d e~f")).not.toBeInstanceOf(Error);
  });
});

/**
 * A token pasted with the prefix svc puts before it itself (Telegram's `bot` of `/bot<token>/`, an
 * Authorization header's `Bot ` or `Bearer `) passed the load and svc config check; every request then
 * failed with an answer that did not say why (Telegram's 404 Not Found, a 401).
 */
describe("a token pasted with the prefix svc adds itself", () => {
  /** The start's warnings about the platforms' tokens, each given by `.env` as `${TOKEN_<platform>}`. */
  function tokenWarnings(tokens: Record<string, string>): string[] {
    home = tempHome();
    const platforms = Object.keys(tokens)
      .map(
        (name) => `  ${name}: {enabled: true, token: '\${TOKEN_${name}}', base_url: 'https://x.example'}\n`,
      )
      .join("");
    home.write("config.yaml", `platforms:\n${platforms}`);
    const env = Object.fromEntries(Object.entries(tokens).map(([name, token]) => [`TOKEN_${name}`, token]));
    const loaded: LoadedConfig = loadConfig({ home: home.dir, env });
    return unusedSettingWarnings(loaded.config, loaded.paths.config).filter((w) => w.includes(".token: "));
  }

  it("is named at load with the key and the fix, never the token", () => {
    const tokens = {
      telegram: "bot123456:AAH-secret-telegram",
      discord: "Bot MTIz.secret-discord",
      slack: "Bearer xoxb-secret-slack",
      mattermost: "bearer secret-mattermost",
    };
    const warnings = tokenWarnings(tokens);
    const file = `${home?.dir}/config.yaml`;
    expect(warnings).toEqual([
      `[delivery] ${file}: platforms.telegram.token: starts with "bot" — svc adds the prefix itself (its requests go to /bot<token>/...): write the token without it, as @BotFather gives it (<bot id>:<secret>); as written, Telegram answers every request 404 Not Found`,
      `[delivery] ${file}: platforms.discord.token: starts with "Bot " — svc adds the prefix itself (Authorization: Bot <token>): write the token without it; as written, Discord refuses every request (401 Unauthorized)`,
      `[delivery] ${file}: platforms.slack.token: starts with "Bearer " — svc adds the prefix itself (Authorization: Bearer <token>): write the token without it; as written, slack refuses every request as unauthorized`,
      `[delivery] ${file}: platforms.mattermost.token: starts with "Bearer " — svc adds the prefix itself (Authorization: Bearer <token>): write the token without it; as written, mattermost refuses every request as unauthorized`,
    ]);
    for (const token of Object.values(tokens)) expect(warnings.join("\n")).not.toContain(token.slice(4));
  });

  it("a Telegram token of another shape than <bot id>:<secret> is named; tokens as the platforms give them are not", () => {
    const file = () => `${home?.dir}/config.yaml`;
    expect(tokenWarnings({ telegram: "AAH-secret-without-id" })).toEqual([
      `[delivery] ${file()}: platforms.telegram.token: is not shaped as a Telegram bot token, <bot id>:<secret> (digits, a colon, then letters, digits, - and _) — copy it again from @BotFather (/mybots → the bot → API Token); Telegram answers a malformed token 404 Not Found`,
    ]);
    home?.cleanup();
    expect(
      tokenWarnings({
        telegram: "123456:AAH-bot_token",
        discord: "MTIz.Bot.secret",
        slack: "xoxb-1-Bearer",
        matrix: "syt_Bearer",
      }),
    ).toEqual([]);
  });
});
