import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { directNoteConfig, startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { message, registryFor } from "./support.js";

/**
 * A text longer than Telegram's 4096 characters goes out as several messages. When two such texts are
 * delivered to the same chat at the same time, each one's parts must still arrive together and in order
 * (a reader cannot reassemble interleaved halves); messages to other chats are not held up.
 */
let tg: FakeApi;
let gw: TestGateway;
/** The slow chat (-2002) is answered only once this is released. */
let releaseSlowChat: () => void = () => {};
const slowChatReleased = new Promise<void>((resolve) => {
  releaseSlowChat = resolve;
});
beforeAll(async () => {
  let id = 0;
  tg = await startFakeApi(async (r) => {
    if (r.path.endsWith("/getMe")) return { json: { ok: true, result: { username: "bot" } } };
    id += 1;
    const message_id = id;
    if ((r.json as { chat_id?: unknown }).chat_id === -2002) await slowChatReleased;
    return { delayMs: 25, json: { ok: true, result: { message_id } } };
  });
  gw = await startTestGateway({
    config: directNoteConfig(
      "telegram",
      { chat_id: "{chat}" },
      { token: "1:abc", base_url: tg.url },
      { rate_limit: 1000 },
    ),
  });
});
afterAll(async () => {
  await gw.stop();
  await tg.close();
});

/** A text of three Telegram messages whose lines name it (`A0 ...`), so each part shows its origin. */
const longText = (name: string) =>
  Array.from({ length: 300 }, (_, i) => `${name}${i} ${"x".repeat(30)}`).join("\n");

describe("split messages to one chat stay contiguous", () => {
  it("two concurrent long deliveries to the same chat: all parts of one, then all parts of the other", async () => {
    const answers = await Promise.all(
      ["A", "B"].map((name) => postJson(gw.url("/webhooks/note"), { text: longText(name), chat: "-1001" })),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    const sent = tg.requests
      .filter((r) => r.path.endsWith("/sendMessage"))
      .map((r) => (r.json as { text: string }).text);
    expect(sent.length).toBe(6);
    const origins = sent.map((text) => text[0]);
    expect(["AAABBB", "BBBAAA"]).toContain(origins.join(""));
    expect(sent.filter((t) => t[0] === "A").join("")).toBe(longText("A"));
    expect(sent.filter((t) => t[0] === "B").join("")).toBe(longText("B"));
  });

  it("a slow chat does not hold up deliveries to another chat", async () => {
    let slowAnswered = false;
    const slow = postJson(gw.url("/webhooks/note"), { text: "to the slow chat", chat: "-2002" }).finally(
      () => {
        slowAnswered = true;
      },
    );
    // The slow chat's message is at the platform, which holds its answer.
    await vi.waitFor(
      () => expect(tg.requests.some((r) => (r.json as { chat_id?: unknown }).chat_id === -2002)).toBe(true),
      { timeout: 10_000, interval: 10 },
    );
    const fast = await postJson(gw.url("/webhooks/note"), { text: "to another chat", chat: "-3003" });
    expect(fast.status).toBe(200);
    // Delivered while the slow chat's delivery still waits for its answer.
    expect(slowAnswered).toBe(false);
    releaseSlowChat();
    expect((await slow).status).toBe(200);
  });
});

describe("split SMS to one number stay contiguous", () => {
  it("two concurrent long texts to the same number: all parts of one, then all parts of the other", async () => {
    const twilio = await startFakeApi(() => ({ delayMs: 10, status: 201, json: { sid: "SM1" } }));
    try {
      const sms = registryFor({
        sms: {
          enabled: true,
          account_sid: "AC1",
          auth_token: "t",
          from: "+15550000000",
          base_url: twilio.url,
        },
      }).get("sms");
      // Two SMS bodies each (1600 characters per message).
      const text = (name: string) => `${name}${"x".repeat(1598)} ${name}${"y".repeat(1000)}`;
      await Promise.all(
        ["A", "B"].map((name) => sms?.send(message(text(name), { chat_id: "+15551112222" }))),
      );
      const bodies = twilio.requests.map((r) => r.form?.get("Body") ?? "");
      expect(["AABB", "BBAA"]).toContain(bodies.map((body) => body[0]).join(""));
      expect(bodies.filter((body) => body[0] === "A").join("")).toBe(text("A"));
    } finally {
      await twilio.close();
    }
  });
});
