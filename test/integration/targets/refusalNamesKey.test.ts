import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeDiscord } from "../../fakes/discord.js";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { startFakeTelegram } from "../../fakes/telegram.js";
import { startFakeTwilio } from "../../fakes/twilio.js";
import { message, registryFor, sendError } from "./support.js";

/**
 * A platform refusing the credentials (a revoked bot token, a wrong Twilio auth token) or the chat (not
 * found, the bot kicked out of it) says only "Unauthorized" or "chat not found": the failure names the
 * config key to fix, and for a chat where its id came from (the route's deliver_extra or the home channel).
 */
const TOKEN = "123456:AAH-bot-token-value";
let telegram: FakeApi;
let slack: FakeApi;
beforeAll(async () => {
  telegram = await startFakeTelegram({ token: TOKEN });
  slack = await startFakeApi(() => ({ json: { ok: true, channel: "C1", ts: "1.1" } }));
});
afterAll(async () => {
  await telegram.close();
  await slack.close();
});

const telegramWith = (token: string) =>
  registryFor({
    telegram: { enabled: true, token, base_url: telegram.url, home_channel: "-100500" },
  });

describe("a refused credential names its config key", () => {
  it("telegram: a revoked token (401) names platforms.telegram.token, never its value", async () => {
    const registry = telegramWith("999:revoked-token-value");
    const checked = await registry
      .get("telegram")
      ?.check?.()
      .catch((e: unknown) => e);
    expect((checked as Error).message).toBe(
      "telegram: getMe: HTTP 401 — Unauthorized — the platform refused the credentials: check platforms.telegram.token",
    );
    const error = (await sendError(registry, "telegram", message("x"))) as Error;
    expect(error.message).toBe(
      "telegram: sendMessage: HTTP 401 — Unauthorized — the platform refused the credentials: check platforms.telegram.token",
    );
    expect(error.message).not.toContain("revoked-token-value");
  });

  it("telegram: a token pasted with its bot prefix (the Bot API's 404 Not Found) names platforms.telegram.token", async () => {
    const registry = telegramWith(`bot${TOKEN}`);
    const checked = await registry
      .get("telegram")
      ?.check?.()
      .catch((e: unknown) => e);
    expect((checked as Error).message).toBe(
      "telegram: getMe: HTTP 404 — Not Found — the platform refused the credentials: check platforms.telegram.token",
    );
    const error = (await sendError(registry, "telegram", message("x"))) as Error;
    expect(error.message).toBe(
      "telegram: sendMessage: HTTP 404 — Not Found — the platform refused the credentials: check platforms.telegram.token",
    );
  });

  it("telegram: a 404 that is not the Bot API's answer (a proxy's page, a wrong base_url) names platforms.telegram.base_url, not the token", async () => {
    const registry = telegramWith(TOKEN);
    telegram.enqueue({
      status: 404,
      headers: { "content-type": "text/html" },
      text: "<html><head><title>404 Not Found</title></head><body><center>nginx</center></body></html>",
    });
    const page = (await sendError(registry, "telegram", message("x"))) as Error;
    telegram.enqueue({ status: 404, json: { error: "no such route" } });
    const json = (await sendError(registry, "telegram", message("x"))) as Error;
    expect(page.message).toBe(
      'telegram: sendMessage: HTTP 404 — an HTML page "404 Not Found" (89 characters, not shown) — not the Bot API\'s answer: check platforms.telegram.base_url',
    );
    expect(json.message).toBe(
      "telegram: sendMessage: HTTP 404 — no such route — not the Bot API's answer: check platforms.telegram.base_url",
    );
  });

  it("discord and mattermost: a 401 names platforms.<platform>.token", async () => {
    const discord = await startFakeDiscord("right-token");
    try {
      const registry = registryFor({
        discord: { enabled: true, token: "wrong-token", base_url: discord.url, home_channel: "1" },
        mattermost: { enabled: true, token: "wrong-token", base_url: discord.url, home_channel: "c" },
      });
      const checked = await registry
        .get("discord")
        ?.check?.()
        .catch((e: unknown) => e);
      expect((checked as Error).message).toBe(
        "discord: users/@me: HTTP 401 — 401: Unauthorized — the platform refused the credentials: check platforms.discord.token",
      );
      discord.enqueue({
        status: 401,
        json: {
          id: "api.context.session_expired.app_error",
          message: "Invalid or expired session, please login again.",
          status_code: 401,
        },
      });
      const error = (await sendError(registry, "mattermost", message("x"))) as Error;
      expect(error.message).toMatch(
        / — the platform refused the credentials: check platforms\.mattermost\.token$/,
      );
    } finally {
      await discord.close();
    }
  });

  it("sms: a wrong auth token (Twilio 20003) names platforms.sms.account_sid and auth_token", async () => {
    const sid = `AC${"1".repeat(32)}`;
    const twilio = await startFakeTwilio(sid, "right-token");
    try {
      const registry = registryFor({
        sms: {
          enabled: true,
          account_sid: sid,
          auth_token: "WRONG-TOKEN",
          from: "+15550000000",
          base_url: twilio.url,
        },
      });
      const error = (await sendError(registry, "sms", message("x", { chat_id: "+15551112222" }))) as Error;
      expect(error.message).toBe(
        "sms: create message: HTTP 401 — Authenticate (Twilio error 20003) — the platform refused the credentials: check platforms.sms.account_sid and platforms.sms.auth_token",
      );
    } finally {
      await twilio.close();
    }
  });

  it("slack: invalid_auth and token_revoked (HTTP 200, ok: false) name platforms.slack.token", async () => {
    const registry = registryFor({
      slack: { enabled: true, token: "xoxb-revoked", base_url: slack.url, home_channel: "C1" },
    });
    for (const code of ["invalid_auth", "token_revoked"]) {
      slack.enqueue({ json: { ok: false, error: code } });
      const error = (await sendError(registry, "slack", message("x"))) as Error;
      expect(error.message).toBe(
        `slack: chat.postMessage: ${code} — the platform refused the credentials: check platforms.slack.token`,
      );
    }
  });
});

describe("a refused chat names where its id came from", () => {
  const refusals = [
    [400, "Bad Request: chat not found"],
    [403, "Forbidden: bot was kicked from the supergroup chat"],
    [403, "Forbidden: bot is not a member of the channel chat"],
  ] as const;

  it("telegram: chat not found, the bot kicked or not a member — the route's deliver_extra.chat_id", async () => {
    const registry = telegramWith(TOKEN);
    for (const [status, description] of refusals) {
      telegram.enqueue({ status, json: { ok: false, error_code: status, description } });
      const error = (await sendError(registry, "telegram", message("x", { chat_id: "-100777" }))) as Error;
      expect(error.message).toBe(
        `telegram: sendMessage: HTTP ${status} — ${description} — check chat -100777, from deliver_extra.chat_id of route "alerts"`,
      );
    }
  });

  it("telegram: the home channel's chat is named as platforms.telegram.home_channel", async () => {
    telegram.enqueue({
      status: 400,
      json: { ok: false, error_code: 400, description: "Bad Request: chat not found" },
    });
    const error = (await sendError(telegramWith(TOKEN), "telegram", message("x"))) as Error;
    expect(error.message).toBe(
      "telegram: sendMessage: HTTP 400 — Bad Request: chat not found — check chat -100500, from platforms.telegram.home_channel",
    );
  });

  it("slack: channel_not_found and not_in_channel name the key; another refusal is left as it was", async () => {
    const registry = registryFor({
      slack: { enabled: true, token: "xoxb-1", base_url: slack.url, home_channel: "C1" },
    });
    for (const code of ["channel_not_found", "not_in_channel", "is_archived"]) {
      slack.enqueue({ json: { ok: false, error: code } });
      const error = (await sendError(registry, "slack", message("x", { chat_id: "C999" }))) as Error;
      expect(error.message).toBe(
        `slack: chat.postMessage: ${code} — check chat C999, from deliver_extra.chat_id of route "alerts"`,
      );
    }
    slack.enqueue({ json: { ok: false, error: "msg_too_long" } });
    const other = (await sendError(registry, "slack", message("x"))) as Error;
    expect(other.message).toBe("slack: chat.postMessage: msg_too_long");
  });

  it("discord: Unknown Channel and Missing Access name the channel, or the thread a message went to", async () => {
    const discord = await startFakeDiscord("right-token");
    try {
      const registry = registryFor({
        discord: { enabled: true, token: "right-token", base_url: discord.url, home_channel: "111" },
      });
      discord.enqueue({ status: 404, json: { message: "Unknown Channel", code: 10003 } });
      const unknown = (await sendError(registry, "discord", message("x", { chat_id: "222" }))) as Error;
      expect(unknown.message).toBe(
        'discord: create message: HTTP 404 — Unknown Channel — check chat 222, from deliver_extra.chat_id of route "alerts"',
      );
      discord.enqueue({ status: 403, json: { message: "Missing Access", code: 50001 } });
      const thread = (await sendError(registry, "discord", message("x", { thread_id: "333" }))) as Error;
      expect(thread.message).toBe(
        'discord: create message: HTTP 403 — Missing Access — check thread 333, from deliver_extra.thread_id of route "alerts"',
      );
    } finally {
      await discord.close();
    }
  });

  it("matrix: M_FORBIDDEN (the bot not in the room) names the room and its key", async () => {
    const registry = registryFor({
      matrix: { enabled: true, token: "syt_1", base_url: slack.url, home_channel: "!home:example.org" },
    });
    slack.enqueue({
      status: 403,
      json: { errcode: "M_FORBIDDEN", error: "User @svc:example.org not in room !home:example.org" },
    });
    const error = (await sendError(registry, "matrix", message("x"))) as Error;
    expect(error.message).toBe(
      "matrix: send m.room.message: HTTP 403 — User @svc:example.org not in room !home:example.org — check chat !home:example.org, from platforms.matrix.home_channel",
    );
  });

  it("a later part refused names the chat too, after the parts already delivered", async () => {
    const registry = telegramWith(TOKEN);
    telegram.enqueue({ json: { ok: true, result: { message_id: 1, chat: { id: -100500 } } } });
    telegram.enqueue({
      status: 403,
      json: { ok: false, error_code: 403, description: "Forbidden: bot was kicked from the supergroup chat" },
    });
    const error = (await sendError(registry, "telegram", message("a\n".repeat(3000)))) as Error;
    expect(error.message).toBe(
      "telegram: sendMessage: HTTP 403 — Forbidden: bot was kicked from the supergroup chat — check chat -100500, from platforms.telegram.home_channel (part 2 of 2; part 1 was delivered)",
    );
  });
});
