import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createDeliverer } from "../../../src/actors/deliver.js";
import { svcPaths } from "../../../src/config/paths.js";
import type { MirrorShare } from "../../../src/io/sessions/mirror.js";
import { SessionStore } from "../../../src/io/sessions/store.js";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { startFakeTelegram } from "../../fakes/telegram.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { message, registryFor } from "./support.js";

let fake: FakeApi;
let home: TempHome;
beforeAll(async () => {
  fake = await startFakeTelegram();
});
afterAll(() => fake.close());
afterEach(() => home.cleanup());

const NOW = new Date("2026-11-22T20:00:00.000Z");

function deliverer(
  platforms: Record<string, unknown> = { telegram: { enabled: true, token: "1:x", base_url: fake.url } },
  share?: MirrorShare,
) {
  home = tempHome();
  const log = captureLogger();
  const d = createDeliverer({
    targets: registryFor(platforms),
    logger: log.logger,
    paths: svcPaths(home.dir),
    sleep: async () => {},
    now: () => NOW,
    ...(share === undefined ? {} : { mirrorsElsewhere: () => share }),
  });
  return { d, log };
}

const request = (extra: Record<string, string>, profile?: string) => ({
  target: "telegram",
  message: message("PR #7 merged", extra, { route: "gh-merges", profile }),
  mode: "direct" as const,
  mirrorToSession: true,
});

describe("mirror_to_session", () => {
  it("appends [Webhook delivery: <route>] and the message to the chat's existing transcript", async () => {
    const { d } = deliverer();
    const store = SessionStore.forProfile(home.dir, undefined, () => NOW);
    const record = await store.openChat("telegram", "-100500");
    await d.deliver(request({ chat_id: "-100500" }));
    expect(store.entries("telegram:-100500")).toEqual([
      {
        role: "assistant",
        content: "[Webhook delivery: gh-merges]\nPR #7 merged",
        source: "webhook:gh-merges",
        at: NOW.toISOString(),
      },
    ]);
    const transcript = join(home.dir, "sessions", record.file);
    expect(record.file).toBe("telegram/-100500.jsonl");
    expect(statSync(transcript).mode & 0o777).toBe(0o600);
  });

  it("mirrors a split message as one entry with the whole text", async () => {
    const { d } = deliverer();
    const store = SessionStore.forProfile(home.dir, undefined);
    await store.openChat("telegram", "11");
    const text = `${"a".repeat(4000)}\n${"b".repeat(4000)}`;
    const receipt = await d.deliver({
      ...request({ chat_id: "11" }),
      message: message(text, { chat_id: "11" }),
    });
    expect(receipt.parts).toBe(2);
    expect(store.entries("telegram:11").map((entry) => entry.content)).toEqual([
      `[Webhook delivery: alerts]\n${text}`,
    ]);
  });

  it("mirrors into the session of the supergroup a migrated Telegram group's message went to, not the old group's", async () => {
    const migrated = await startFakeTelegram({ migrated: { "-555": -1009999 } });
    try {
      const { d } = deliverer({ telegram: { enabled: true, token: "1:x", base_url: migrated.url } });
      const store = SessionStore.forProfile(home.dir, undefined, () => NOW);
      await store.openChat("telegram", "-555");
      await store.openChat("telegram", "-1009999");
      const receipt = await d.deliver(request({ chat_id: "-555" }));
      expect(receipt.chatId).toBe("-1009999");
      expect(store.entries("telegram:-1009999").map((entry) => entry.content)).toEqual([
        "[Webhook delivery: gh-merges]\nPR #7 merged",
      ]);
      // The old group, which Telegram closed when it moved, gets nothing.
      expect(store.entries("telegram:-555")).toEqual([]);
    } finally {
      await migrated.close();
    }
  });

  it("mirrors a Telegram message sent to a public chat's @username into the session of the chat's numeric id, which the Bot API answers with", async () => {
    const named = await startFakeTelegram({ usernames: { "@ops_team": -1001234 } });
    try {
      const { d } = deliverer({ telegram: { enabled: true, token: "1:x", base_url: named.url } });
      const store = SessionStore.forProfile(home.dir, undefined, () => NOW);
      // A chat front end keys a Telegram chat's session by the numeric id every update carries.
      await store.openChat("telegram", "-1001234");
      const receipt = await d.deliver(request({ chat_id: "@ops_team" }));
      expect(receipt.chatId).toBe("-1001234");
      expect(store.entries("telegram:-1001234").map((entry) => entry.content)).toEqual([
        "[Webhook delivery: gh-merges]\nPR #7 merged",
      ]);
    } finally {
      await named.close();
    }
  });

  it("mirrors a Slack message sent to a #channel name into the session of the channel ID Slack answers with", async () => {
    const slack = await startFakeApi(() => ({
      json: { ok: true, channel: "C0123456789", ts: "1700000000.000100", message: { text: "PR #7 merged" } },
    }));
    try {
      const { d } = deliverer({ slack: { enabled: true, token: "xoxb-1", base_url: slack.url } });
      const store = SessionStore.forProfile(home.dir, undefined, () => NOW);
      // A chat front end keys a Slack channel's session by the channel ID its events carry.
      await store.openChat("slack", "C0123456789");
      const receipt = await d.deliver({ ...request({ chat_id: "#deploys" }), target: "slack" });
      expect(receipt.chatId).toBe("C0123456789");
      expect(store.entries("slack:C0123456789").map((entry) => entry.content)).toEqual([
        "[Webhook delivery: gh-merges]\nPR #7 merged",
      ]);
    } finally {
      await slack.close();
    }
  });

  it("mirrors a Feishu message sent to a user's open_id into the session of the chat Feishu answers with", async () => {
    const feishu = await startFakeApi((r) =>
      r.path.startsWith("/open-apis/auth/")
        ? { json: { code: 0, msg: "ok", tenant_access_token: "t-1", expire: 7200 } }
        : {
            json: {
              code: 0,
              msg: "success",
              data: { message_id: "om_1", chat_id: "oc_p2p42", msg_type: "text" },
            },
          },
    );
    try {
      const { d } = deliverer({
        feishu: { enabled: true, app_id: "cli_1", app_secret: "s3cret", base_url: feishu.url },
      });
      const store = SessionStore.forProfile(home.dir, undefined, () => NOW);
      // A chat front end keys a Feishu chat's session by the chat_id its message events carry (a p2p chat's too).
      await store.openChat("feishu", "oc_p2p42");
      const receipt = await d.deliver({ ...request({ chat_id: "ou_user7" }), target: "feishu" });
      expect(receipt.chatId).toBe("oc_p2p42");
      expect(store.entries("feishu:oc_p2p42").map((entry) => entry.content)).toEqual([
        "[Webhook delivery: gh-merges]\nPR #7 merged",
      ]);
    } finally {
      await feishu.close();
    }
  });

  it("mirrors a WhatsApp message into the session of the wa_id WhatsApp answers with, where it differs from the number written", async () => {
    const whatsapp = await startFakeApi(() => ({
      json: {
        messaging_product: "whatsapp",
        // A Brazilian mobile number written with its ninth digit: WhatsApp's id for the user has none.
        contacts: [{ input: "5511987654321", wa_id: "551187654321" }],
        messages: [{ id: "wamid.1" }],
      },
    }));
    try {
      const { d } = deliverer({
        whatsapp: { enabled: true, token: "EAAG1", phone_number_id: "1098", base_url: whatsapp.url },
      });
      const store = SessionStore.forProfile(home.dir, undefined, () => NOW);
      // A chat front end keys a WhatsApp chat's session by the wa_id its incoming messages carry (`from`).
      await store.openChat("whatsapp", "551187654321");
      const receipt = await d.deliver({ ...request({ chat_id: "5511987654321" }), target: "whatsapp" });
      expect(receipt.chatId).toBe("551187654321");
      expect(store.entries("whatsapp:551187654321").map((entry) => entry.content)).toEqual([
        "[Webhook delivery: gh-merges]\nPR #7 merged",
      ]);
    } finally {
      await whatsapp.close();
    }
  });

  it("mirrors a Matrix message sent to a room alias into the session of the room it resolved to", async () => {
    const matrix = await startFakeApi((r) => ({
      json:
        r.method === "GET" ? { room_id: "!abc:example.org", servers: ["example.org"] } : { event_id: "$1" },
    }));
    try {
      const { d } = deliverer({ matrix: { enabled: true, token: "syt_x", base_url: matrix.url } });
      const store = SessionStore.forProfile(home.dir, undefined, () => NOW);
      // A chat front end keys a Matrix room's session by its room ID, which every event of the room carries.
      await store.openChat("matrix", "!abc:example.org");
      const receipt = await d.deliver({ ...request({ chat_id: "#ops:example.org" }), target: "matrix" });
      expect(receipt.chatId).toBe("!abc:example.org");
      expect(store.entries("matrix:!abc:example.org").map((entry) => entry.content)).toEqual([
        "[Webhook delivery: gh-merges]\nPR #7 merged",
      ]);
    } finally {
      await matrix.close();
    }
  });

  it("skips a chat without a session and creates nothing", async () => {
    const { d, log } = deliverer();
    await d.deliver(request({ chat_id: "777" }));
    expect(SessionStore.forProfile(home.dir, undefined).get("telegram:777")).toBeUndefined();
    expect(log.messages().some((m) => m.includes("has no session"))).toBe(true);
  });

  it("with other instances sharing the state (redis), says whether they were told a mirror it had no session for", async () => {
    let told = true;
    const { d, log } = deliverer(undefined, { tell: async () => told });
    await d.deliver(request({ chat_id: "777" }));
    told = false;
    await d.deliver(request({ chat_id: "778" }));
    expect(log.messages().filter((m) => m.includes("has no session"))).toEqual([
      "[delivery] mirror_to_session skipped: telegram chat 777 has no session here (told to the other instances)",
      "[delivery] mirror_to_session skipped: telegram chat 778 has no session here, nor was it told to the other instances (Redis refused the publish or did not answer)",
    ]);
  });

  it("writes only to the profile of a profile-prefixed route", async () => {
    const { d } = deliverer();
    const work = SessionStore.forProfile(home.dir, "work");
    const personal = SessionStore.forProfile(home.dir, undefined);
    await work.openChat("telegram", "9");
    await personal.openChat("telegram", "9");
    await d.deliver(request({ chat_id: "9" }, "work"));
    expect(work.entries("telegram:9")).toHaveLength(1);
    expect(personal.entries("telegram:9")).toHaveLength(0);
    expect(work.dir).toBe(join(home.dir, "profiles", "work", "sessions"));
  });

  it("never fails the delivery when the session store is broken", async () => {
    const { d, log } = deliverer();
    const store = SessionStore.forProfile(home.dir, undefined);
    await store.openChat("telegram", "5");
    home.write("sessions/index.json", "{not json");
    await expect(d.deliver(request({ chat_id: "5" }))).resolves.toMatchObject({ chatId: "5" });
    expect(
      log.messages().some((m) => m.includes("mirror_to_session failed (the delivery itself succeeded)")),
    ).toBe(true);
  });

  it("does not mirror when the delivery failed", async () => {
    const { d } = deliverer();
    const store = SessionStore.forProfile(home.dir, undefined);
    await store.openChat("telegram", "6");
    fake.enqueue({ status: 400, json: { ok: false, description: "Bad Request: chat not found" } });
    await expect(d.deliver(request({ chat_id: "6" }))).rejects.toThrow(/chat not found/);
    expect(store.entries("telegram:6")).toEqual([]);
  });

  it("keeps concurrent mirrors whole (one JSON line each)", async () => {
    const { d } = deliverer();
    const store = SessionStore.forProfile(home.dir, undefined);
    await store.openChat("telegram", "8");
    await Promise.all(Array.from({ length: 10 }, () => d.deliver(request({ chat_id: "8" }))));
    const record = store.get("telegram:8");
    const lines = readFileSync(join(store.dir, record?.file ?? ""), "utf8")
      .trim()
      .split("\n");
    expect(lines).toHaveLength(10);
    for (const line of lines)
      expect(JSON.parse(line)).toMatchObject({ content: "[Webhook delivery: gh-merges]\nPR #7 merged" });
  });
});
