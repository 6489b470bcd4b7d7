import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeApi } from "../../fakes/httpFake.js";
import { startFakeTelegram } from "../../fakes/telegram.js";
import { message, registryFor, sendError } from "./support.js";

/**
 * Without deliver_extra.chat_id a chat message goes to the platform's home channel; without one (or with a
 * blank one, as `home_channel: ${HOME}` with `HOME=` in .env gives) nothing is sent and the error names
 * both keys.
 */
let fake: FakeApi;
beforeAll(async () => {
  fake = await startFakeTelegram();
});
afterAll(() => fake.close());

const telegram = (home_channel?: string) =>
  registryFor({
    telegram: {
      enabled: true,
      token: "1:HOMECHANNELTOKEN",
      base_url: fake.url,
      ...(home_channel === undefined ? {} : { home_channel }),
    },
  });

const sends = () =>
  fake.requests.filter((r) => r.path.endsWith("/sendMessage")).map((r) => r.json as { chat_id: unknown });

describe("telegram: the home channel", () => {
  it("is used without deliver_extra.chat_id, trimmed as a route's chat id is", async () => {
    fake.requests.length = 0;
    await expect(telegram(" -1009876 ").get("telegram")?.send(message("hello"))).resolves.toEqual({
      chatId: "-1009876",
      parts: 1,
    });
    expect(sends()).toEqual([{ chat_id: -1009876, text: "hello" }]);
  });

  it.each([
    ["not set", undefined],
    ["empty", ""],
    ["blank", "   "],
  ])("%s: the delivery fails naming both keys, nothing sent", async (_, home) => {
    fake.requests.length = 0;
    const err = await sendError(telegram(home), "telegram", message("hello"));
    expect((err as Error).message).toBe(
      'telegram: no chat to deliver to — set deliver_extra.chat_id on route "alerts" or platforms.telegram.home_channel',
    );
    expect(sends()).toEqual([]);
  });
});
