import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeApi } from "../../fakes/httpFake.js";
import { startFakeTelegram } from "../../fakes/telegram.js";
import { message, registryFor, sendError } from "./support.js";

/**
 * Against a Bot API fake that refuses, as Telegram does, a `parse_mode` text whose formatting does not parse
 * (400 "can't parse entities") and a request with another bot's token (401 "Unauthorized"): a reply quoting
 * payload text full of `*`, `_`, `<` and `.` goes out as plain text, as written.
 */
const TOKEN = "123456:AAH-bot-token-value";
let fake: FakeApi;
beforeAll(async () => {
  fake = await startFakeTelegram({ token: TOKEN });
});
afterAll(() => fake.close());

const sends = () =>
  fake.requests.filter((r) => r.path.endsWith("/sendMessage")).map((r) => r.json as Record<string, unknown>);

describe("telegram: the text goes as plain text", () => {
  it("formatting characters from the payload are delivered as written, with no parse_mode to refuse them", async () => {
    fake.requests.length = 0;
    const telegram = registryFor({
      telegram: { enabled: true, token: TOKEN, base_url: fake.url, home_channel: "-1001234567890" },
    }).get("telegram");
    const text = "Build *failed on feature_x: `npm test` exited 1 <stderr> (see log.txt)!";
    await expect(telegram?.send(message(text))).resolves.toMatchObject({ parts: 1 });
    expect(sends()).toEqual([{ chat_id: -1001234567890, text }]);
    // What a formatted send of that text would have drawn:
    for (const parse_mode of ["MarkdownV2", "Markdown", "HTML"]) {
      const answer = await fetch(`${fake.url}/bot${TOKEN}/sendMessage`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ chat_id: -1001234567890, text, parse_mode }),
      });
      expect(answer.status).toBe(400);
      expect(((await answer.json()) as { description: string }).description).toMatch(
        /^Bad Request: can't parse entities: /,
      );
    }
  });

  it("a numeric chat id is sent as a number, a channel's @username as text", async () => {
    fake.requests.length = 0;
    const telegram = registryFor({ telegram: { enabled: true, token: TOKEN, base_url: fake.url } }).get(
      "telegram",
    );
    await telegram?.send(message("a", { chat_id: "@svc_alerts" }));
    await telegram?.send(message("b", { chat_id: "987654321" }));
    expect(sends()).toEqual([
      { chat_id: "@svc_alerts", text: "a" },
      { chat_id: 987654321, text: "b" },
    ]);
  });

  it("another bot's token: the check and the delivery fail with the Bot API's 401, the token not in the error", async () => {
    const telegram = registryFor({
      telegram: { enabled: true, token: "999:revoked-token-value", base_url: fake.url, home_channel: "5" },
    }).get("telegram");
    const checked = await telegram?.check?.().catch((e: unknown) => e);
    expect((checked as Error).message).toBe(
      "telegram: getMe: HTTP 401 — Unauthorized — the platform refused the credentials: check platforms.telegram.token",
    );
    const error = await sendError(
      registryFor({
        telegram: { enabled: true, token: "999:revoked-token-value", base_url: fake.url, home_channel: "5" },
      }),
      "telegram",
      message("x"),
    );
    expect((error as Error).message).toBe(
      "telegram: sendMessage: HTTP 401 — Unauthorized — the platform refused the credentials: check platforms.telegram.token",
    );
  });
});
