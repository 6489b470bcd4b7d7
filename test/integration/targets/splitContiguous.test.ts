import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * A text longer than Telegram's 4096 characters goes out as several messages. When two such texts are
 * delivered to the same chat at the same time, each one's parts must still arrive together and in order
 * (a reader cannot reassemble interleaved halves); messages to other chats are not held up.
 */
const OPEN = "INSECURE_NO_AUTH";
let tg: FakeApi;
let gw: TestGateway;
beforeAll(async () => {
  let id = 0;
  tg = await startFakeApi((r) => {
    if (r.path.endsWith("/getMe")) return { json: { ok: true, result: { username: "bot" } } };
    id += 1;
    const slow = (r.json as { chat_id?: unknown }).chat_id === -2002;
    return { delayMs: slow ? 1500 : 25, json: { ok: true, result: { message_id: id } } };
  });
  gw = await startTestGateway({
    config: webhookConfig(
      {
        note: {
          secret: OPEN,
          prompt: "{text}",
          deliver: "telegram",
          deliver_only: true,
          deliver_extra: { chat_id: "{chat}" },
        },
      },
      { rate_limit: 1000 },
      { platforms: { telegram: { enabled: true, token: "1:abc", base_url: tg.url } } },
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
    const slow = postJson(gw.url("/webhooks/note"), { text: "to the slow chat", chat: "-2002" });
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    const fast = await postJson(gw.url("/webhooks/note"), { text: "to another chat", chat: "-3003" });
    expect(fast.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(1000);
    expect((await slow).status).toBe(200);
  });
});
