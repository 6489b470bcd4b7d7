import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeApi } from "../../fakes/httpFake.js";
import { startFakeApi } from "../../fakes/httpFake.js";
import { startFakeTelegram } from "../../fakes/telegram.js";
import { directNoteConfig, startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { message, registryFor } from "./support.js";

/**
 * A route's thread id is often a template (`message_thread_id: "{topic}"`) that only some events fill.
 * For an event without it, spec 2.5 rule 2 leaves the text `{topic}`; no platform has such a topic
 * (Telegram wants an integer), so sending it would fail the delivery. It names no thread: the message
 * goes to the chat itself.
 */
let telegram: FakeApi;
let gw: TestGateway;
beforeAll(async () => {
  telegram = await startFakeTelegram();
  gw = await startTestGateway({
    config: directNoteConfig(
      "telegram",
      { chat_id: "-100", message_thread_id: "{topic}" },
      { token: "1:T", base_url: telegram.url },
      { rate_limit: 1000 },
    ),
  });
});
afterAll(async () => {
  await gw.stop();
  await telegram.close();
});

const lastSend = () => telegram.requests.filter((r) => r.path.endsWith("/sendMessage")).at(-1)?.json;

describe("a thread template the payload does not fill", () => {
  it("telegram: the message goes to the chat without message_thread_id", async () => {
    const res = await postJson(gw.url("/webhooks/note"), { text: "no topic" });
    expect(res).toMatchObject({ status: 200, body: { status: "delivered" } });
    expect(lastSend()).toEqual({ chat_id: -100, text: "no topic" });
  });

  it("telegram: a thread the payload holds as null (an unset optional field) names no topic either", async () => {
    const res = await postJson(gw.url("/webhooks/note"), { text: "null topic", topic: null });
    expect(res).toMatchObject({ status: 200, body: { status: "delivered" } });
    expect(lastSend()).toEqual({ chat_id: -100, text: "null topic" });
  });

  it("telegram: a thread the event filled with a mapping is no unfilled template: it is sent, for the platform to judge", async () => {
    // `{topic}` where the event has `topic: {id: 17}` (meant: `{topic.id}`) renders {"id":17}: it was taken
    // for a template the event did not fill and the message went to the chat itself without a word.
    const res = await postJson(gw.url("/webhooks/note"), { text: "object topic", topic: { id: 17 } });
    expect(res).toMatchObject({ status: 200, body: { status: "delivered" } });
    expect(lastSend()).toEqual({ chat_id: -100, text: "object topic", message_thread_id: '{"id":17}' });
  });

  it("telegram: a filled template still selects the topic", async () => {
    await postJson(gw.url("/webhooks/note"), { text: "topic", topic: 17 });
    expect(lastSend()).toEqual({ chat_id: -100, text: "topic", message_thread_id: 17 });
  });

  it("telegram: topic 1, a forum's General topic, goes without message_thread_id (the Bot API refuses 1)", async () => {
    const res = await postJson(gw.url("/webhooks/note"), { text: "general", topic: 1 });
    expect(res).toMatchObject({ status: 200, body: { status: "delivered" } });
    expect(lastSend()).toEqual({ chat_id: -100, text: "general" });
  });

  it("discord, slack, mattermost: the chat itself", async () => {
    const api = await startFakeApi((r) => ({
      json: r.path.startsWith("/api/chat") ? { ok: true } : { id: "1" },
    }));
    const registry = registryFor({
      discord: { enabled: true, token: "D", base_url: api.url },
      slack: { enabled: true, token: "S", base_url: api.url },
      mattermost: { enabled: true, token: "M", base_url: api.url },
    });
    const unfilled = { chat_id: "555", thread_id: "{thread.id}", thread_ts: "{event.thread_ts}" };
    for (const name of ["discord", "slack", "mattermost"])
      await registry.get(name)?.send(message("hi", unfilled));
    // A payload's null renders as the text null: no thread of any platform.
    await registry.get("discord")?.send(message("hi", { chat_id: "555", thread_id: "null" }));
    expect(api.requests.map((r) => r.path)).toEqual([
      "/api/v10/channels/555/messages",
      "/api/chat.postMessage",
      "/api/v4/posts",
      "/api/v10/channels/555/messages",
    ]);
    expect(api.requests[1]?.json).toEqual({ channel: "555", text: "hi" });
    expect(api.requests[2]?.json).toEqual({
      channel_id: "555",
      message: "hi",
      pending_post_id: expect.any(String),
    });
    await api.close();
  });
});
