import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configSchema } from "../../../src/config/schema.js";
import { createTargets } from "../../../src/io/targets/registry.js";
import type { FakeApi } from "../../fakes/httpFake.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { sentTexts, startFakeTelegram } from "../../fakes/telegram.js";
import { message } from "./support.js";

/**
 * A Telegram group upgraded to a supergroup (turning on topics does it) gets a new chat id; the Bot API
 * then refuses the old id with 400 "group chat was upgraded to a supergroup chat" and
 * `parameters.migrate_to_chat_id` (core.telegram.org/bots/api#responseparameters). The message goes to
 * the new id, the operator is told which id to configure, and later deliveries use it directly.
 */
let fake: FakeApi;
beforeAll(async () => {
  fake = await startFakeTelegram({ migrated: { "-4001": -1009994001 } });
});
afterAll(() => fake.close());

describe("telegram: a group that became a supergroup", () => {
  it("delivers to migrate_to_chat_id, warns with the id to configure, and remembers it", async () => {
    const log = captureLogger();
    const config = configSchema.parse({
      platforms: { telegram: { enabled: true, token: "1:T", base_url: fake.url, home_channel: "-4001" } },
    });
    const telegram = createTargets(config, { logger: log.logger }).get("telegram");
    await telegram?.send(message("first"));
    await telegram?.send(message("second"));
    const chats = fake.requests
      .filter((r) => r.path.endsWith("/sendMessage"))
      .map((r) => (r.json as { chat_id: unknown }).chat_id);
    expect(chats).toEqual([-4001, -1009994001, -1009994001]);
    expect(sentTexts(fake)).toEqual(["first", "first", "second"]);
    const warnings = log.messages().filter((m) => m.includes("upgraded to supergroup"));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("platforms.telegram.home_channel to -1009994001");
    expect(log.lines().join("\n")).not.toContain("1:T");
  });

  it("a chat id named like an Object.prototype member is an ordinary chat, not a migrated one (the fake)", async () => {
    const config = configSchema.parse({
      platforms: { telegram: { enabled: true, token: "1:T", base_url: fake.url } },
    });
    const telegram = createTargets(config, { logger: captureLogger().logger }).get("telegram");
    for (const chat of ["__proto__", "constructor", "toString", "hasOwnProperty"])
      await expect(telegram?.send(message("hi", { chat_id: chat }))).resolves.toMatchObject({ chatId: chat });
  });
});
