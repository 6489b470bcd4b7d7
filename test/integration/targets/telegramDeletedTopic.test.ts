import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configSchema } from "../../../src/config/schema.js";
import { GONE_THREADS_KEPT } from "../../../src/io/targets/chat.js";
import { createTargets } from "../../../src/io/targets/registry.js";
import type { FakeApi } from "../../fakes/httpFake.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { startFakeTelegram } from "../../fakes/telegram.js";
import { message } from "./support.js";

/**
 * A forum topic deleted in Telegram (or a group whose topics were turned off): the Bot API refuses a
 * sendMessage naming it with 400 "message thread not found". The message goes to the chat itself (its
 * General topic) instead of being lost, and the operator is told once which key to fix.
 */
let fake: FakeApi;
beforeAll(async () => {
  fake = await startFakeTelegram({ deletedTopics: [77] });
});
afterAll(() => fake.close());

const sends = () =>
  fake.requests
    .filter((r) => r.path.endsWith("/sendMessage"))
    .map((r) => r.json as { chat_id: unknown; text: string; message_thread_id?: unknown });

describe("telegram: a deleted forum topic", () => {
  it("delivers to the chat without the topic, warns once, and does not ask for that topic again", async () => {
    const log = captureLogger();
    const config = configSchema.parse({
      platforms: { telegram: { enabled: true, token: "1:T", base_url: fake.url } },
    });
    const telegram = createTargets(config, { logger: log.logger }).get("telegram");
    const extra = { chat_id: "-1001234", message_thread_id: "77" };
    await expect(telegram?.send(message("first", extra))).resolves.toMatchObject({ chatId: "-1001234" });
    await telegram?.send(message("second", extra));
    await telegram?.send(message("live topic", { chat_id: "-1001234", thread_id: "78" }));
    expect(sends()).toEqual([
      { chat_id: -1001234, text: "first", message_thread_id: 77 },
      { chat_id: -1001234, text: "first" },
      { chat_id: -1001234, text: "second" },
      { chat_id: -1001234, text: "live topic", message_thread_id: 78 },
    ]);
    const warnings = log.messages().filter((m) => m.includes("was not found"));
    expect(warnings).toEqual([
      '[delivery] telegram: topic 77 of chat -1001234 was not found (deleted, or topics turned off); delivering to the chat itself (its General topic) — fix deliver_extra.message_thread_id (or thread_id) of route "alerts"',
    ]);
  });

  it("the topics remembered as gone are bounded: a flood of rendered topic ids does not grow them for ever", async () => {
    // `message_thread_id: "{topic}"` renders the sender's value: each new one the Bot API does not find is
    // remembered, at most GONE_THREADS_KEPT of them; past that the memory starts over.
    const log = captureLogger();
    const config = configSchema.parse({
      platforms: { telegram: { enabled: true, token: "1:T", base_url: fake.url } },
    });
    const telegram = createTargets(config, { logger: log.logger }).get("telegram");
    const gone = {
      status: 400,
      json: { ok: false, error_code: 400, description: "Bad Request: TOPIC_DELETED" },
    };
    for (let topic = 1000; topic <= 1000 + GONE_THREADS_KEPT; topic++) {
      fake.enqueue(gone);
      await telegram?.send(message("x", { chat_id: "-1007", message_thread_id: String(topic) }));
    }
    expect(log.messages().filter((m) => m.includes("was not found"))).toHaveLength(GONE_THREADS_KEPT + 1);
    // The first topic was forgotten with the others: it is asked for again (it may exist again by now).
    fake.requests.length = 0;
    await telegram?.send(message("again", { chat_id: "-1007", message_thread_id: "1000" }));
    expect(sends()).toEqual([{ chat_id: -1007, text: "again", message_thread_id: 1000 }]);
  });

  it.each(["Bad Request: TOPIC_DELETED", "Bad Request: TOPIC_ID_INVALID"])(
    "the Bot API's other answer for a topic that is gone (%s) is read the same way",
    async (description) => {
      const config = configSchema.parse({
        platforms: { telegram: { enabled: true, token: "1:T", base_url: fake.url } },
      });
      const telegram = createTargets(config, { logger: captureLogger().logger }).get("telegram");
      fake.requests.length = 0;
      fake.enqueue({ status: 400, json: { ok: false, error_code: 400, description } });
      await telegram?.send(message("x", { chat_id: "-1005", message_thread_id: "9" }));
      expect(sends()).toEqual([
        { chat_id: -1005, text: "x", message_thread_id: 9 },
        { chat_id: -1005, text: "x" },
      ]);
    },
  );

  it("a closed topic (TOPIC_CLOSED: it exists, only admins post there) fails the delivery", async () => {
    const config = configSchema.parse({
      platforms: { telegram: { enabled: true, token: "1:T", base_url: fake.url } },
    });
    const telegram = createTargets(config, { logger: captureLogger().logger }).get("telegram");
    fake.enqueue({
      status: 400,
      json: { ok: false, error_code: 400, description: "Bad Request: TOPIC_CLOSED" },
    });
    await expect(telegram?.send(message("x", { chat_id: "-1006", message_thread_id: "4" }))).rejects.toThrow(
      "telegram: sendMessage: HTTP 400 — Bad Request: TOPIC_CLOSED",
    );
  });

  it("another refusal of a message with a topic still fails the delivery", async () => {
    const config = configSchema.parse({
      platforms: { telegram: { enabled: true, token: "1:T", base_url: fake.url } },
    });
    const telegram = createTargets(config, { logger: captureLogger().logger }).get("telegram");
    fake.enqueue({
      status: 400,
      json: { ok: false, error_code: 400, description: "Bad Request: chat not found" },
    });
    await expect(telegram?.send(message("x", { chat_id: "-1009", message_thread_id: "5" }))).rejects.toThrow(
      "telegram: sendMessage: HTTP 400 — Bad Request: chat not found",
    );
  });
});
