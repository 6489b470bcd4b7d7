import { afterEach, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

/**
 * A base_url copied with the API's own path (`https://chat.example.com/api/v4`, `https://slack.com/api`,
 * `https://graph.facebook.com/v21.0`) was accepted, and every request then went to that path twice
 * (`/api/v4/api/v4/posts`): each delivery and the start's check failed with the server's 404, which does not
 * name the setting.
 */
let home: TempHome | undefined;
afterEach(() => home?.cleanup());

function loadError(platforms: string): string | undefined {
  const h = tempHome();
  home = h;
  const file = h.write("config.yaml", `platforms:\n${platforms}`);
  try {
    loadConfig({ home: h.dir, env: {} });
    return undefined;
  } catch (err) {
    return (err as Error).message.replaceAll(file, "FILE");
  }
}

it("is refused at load, naming the key, the path and the base to write", () => {
  const cases: Array<[string, string]> = [
    [
      "  mattermost: {enabled: true, token: t, base_url: 'https://chat.example.com/api/v4/'}\n",
      "FILE: platforms.mattermost.base_url: ends in /api/v4, a path svc adds to every request itself — write https://chat.example.com",
    ],
    [
      "  slack: {enabled: true, token: t, base_url: 'https://slack.com/api'}\n",
      "FILE: platforms.slack.base_url: ends in /api, a path svc adds to every request itself — write https://slack.com",
    ],
    [
      "  chat_2: {enabled: true, token: t, base_url: 'https://discord.com/api/v10'}\n",
      "FILE: platforms.chat_2.base_url: ends in /api/v10, a path svc adds to every request itself — write https://discord.com",
    ],
    [
      "  whatsapp: {enabled: true, token: t, phone_number_id: '1', base_url: 'https://graph.facebook.com/v21.0'}\n",
      "FILE: platforms.whatsapp.base_url: ends in /v21.0, a path svc adds to every request itself — write https://graph.facebook.com",
    ],
    [
      "  matrix: {enabled: true, token: t, base_url: 'https://example.org/matrix/_matrix/client/v3'}\n",
      "FILE: platforms.matrix.base_url: ends in /_matrix/client/v3, a path svc adds to every request itself — write https://example.org/matrix",
    ],
    [
      "  home_automation: {enabled: true, token: t, base_url: 'http://ha.lan:8123/api/'}\n",
      "FILE: platforms.home_automation.base_url: ends in /api, a path svc adds to every request itself — write http://ha.lan:8123",
    ],
    [
      "  sms: {enabled: true, account_sid: AC1, auth_token: t, from: '+1555', base_url: 'https://api.twilio.com/2010-04-01'}\n",
      "FILE: platforms.sms.base_url: ends in /2010-04-01, a path svc adds to every request itself — write https://api.twilio.com",
    ],
  ];
  for (const [yaml, error] of cases) expect(loadError(yaml), yaml).toBe(error);
});

it("Telegram's /bot<token> is named without the token it holds", () => {
  const error = loadError(
    "  telegram: {enabled: true, token: '123:tok', base_url: 'https://api.telegram.org/bot123:SECRET-in-url'}\n",
  );
  expect(error).toBe(
    "FILE: platforms.telegram.base_url: ends in /bot<token>, a path svc adds to every request itself — write https://api.telegram.org",
  );
  expect(error).not.toContain("SECRET");
});

it("a base under a path of its own (a reverse proxy's prefix) is taken as written", () => {
  expect(
    loadError(
      "  mattermost: {enabled: true, token: t, base_url: 'https://example.com/mattermost'}\n" +
        "  matrix: {enabled: true, token: t, base_url: 'https://example.org/matrix/'}\n" +
        "  slack: {enabled: true, token: t, base_url: 'http://127.0.0.1:9/slack-proxy'}\n" +
        "  telegram: {enabled: true, token: '1:t', base_url: 'https://proxy.example.com/bot'}\n",
    ),
  ).toBeUndefined();
});
