import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeliveryError } from "../../../src/io/targets/target.js";
import { VERSION } from "../../../src/io/version.js";
import { type FakeApi, type FakeReply, type RecordedRequest, startFakeApi } from "../../fakes/httpFake.js";
import { message, registryFor, sendError } from "./support.js";

interface AdapterCase {
  readonly name: string;
  /** `platforms.<name>` settings; `base` is replaced by the fake's URL. */
  settings(base: string): Record<string, unknown>;
  readonly extra: Record<string, string>;
  /** Answers of the fake platform (token endpoints included), by path. */
  answer(request: RecordedRequest): FakeReply;
  /** Asserts the message request itself (the last request). */
  expectSend(request: RecordedRequest, text: string): void;
  readonly checkPath: string;
  readonly refusal: FakeReply;
  readonly refusalText: string;
  readonly secrets: readonly string[];
}

const ok = (json: unknown = {}): FakeReply => ({ json });

const CASES: AdapterCase[] = [
  {
    name: "telegram",
    settings: (base) => ({ token: "123456:TG-SECRET", base_url: base }),
    extra: { chat_id: "-1001234", message_thread_id: "77" },
    answer: (r) =>
      ok({ ok: true, result: r.path.endsWith("/getMe") ? { username: "svc_bot" } : { message_id: 1 } }),
    expectSend(r, text) {
      expect(r.method).toBe("POST");
      expect(r.path).toBe("/bot123456:TG-SECRET/sendMessage");
      expect(r.json).toEqual({ chat_id: -1001234, text, message_thread_id: 77 });
    },
    checkPath: "/bot123456:TG-SECRET/getMe",
    refusal: {
      status: 400,
      json: { ok: false, error_code: 400, description: "Bad Request: chat not found" },
    },
    refusalText: "Bad Request: chat not found",
    secrets: ["TG-SECRET"],
  },
  {
    name: "discord",
    settings: (base) => ({ token: "DISCORD-SECRET", base_url: base }),
    extra: { chat_id: "555000111" },
    answer: (r) => ok(r.method === "GET" ? { username: "svc" } : { id: "1" }),
    expectSend(r, text) {
      expect(r.method).toBe("POST");
      expect(r.path).toBe("/api/v10/channels/555000111/messages");
      expect(r.headers.authorization).toBe("Bot DISCORD-SECRET");
      // https://discord.com/developers/docs/reference#user-agent
      expect(r.headers["user-agent"]).toBe(`DiscordBot (svc, ${VERSION})`);
      // nonce + enforce_nonce: a part sent again after its answer was lost is not posted twice.
      expect(r.json).toEqual({
        content: text,
        allowed_mentions: { parse: [] },
        nonce: expect.stringMatching(/^[\w-]{25}$/),
        enforce_nonce: true,
      });
    },
    checkPath: "/api/v10/users/@me",
    refusal: { status: 403, json: { message: "Missing Access", code: 50001 } },
    refusalText: "Missing Access",
    secrets: ["DISCORD-SECRET"],
  },
  {
    name: "slack",
    settings: (base) => ({ token: "xoxb-SLACK-SECRET", base_url: base }),
    extra: { chat_id: "C0123", thread_id: "1700000000.000100" },
    answer: () => ok({ ok: true, user: "svc", team: "acme" }),
    expectSend(r, text) {
      expect(r.method).toBe("POST");
      expect(r.path).toBe("/api/chat.postMessage");
      expect(r.headers.authorization).toBe("Bearer xoxb-SLACK-SECRET");
      expect(r.json).toEqual({ channel: "C0123", text, thread_ts: "1700000000.000100" });
    },
    checkPath: "/api/auth.test",
    refusal: ok({ ok: false, error: "channel_not_found" }),
    refusalText: "channel_not_found",
    secrets: ["xoxb-SLACK-SECRET"],
  },
  {
    name: "signal",
    settings: (base) => ({ number: "+15550001111", base_url: base }),
    extra: { chat_id: "+15550002222" },
    answer: (r) =>
      r.path === "/v1/accounts"
        ? ok(["+15550001111"])
        : { status: 201, json: { timestamp: "1700000000000" } },
    expectSend(r, text) {
      expect(r.method).toBe("POST");
      expect(r.path).toBe("/v2/send");
      expect(r.json).toEqual({ message: text, number: "+15550001111", recipients: ["+15550002222"] });
    },
    checkPath: "/v1/accounts",
    refusal: { status: 400, json: { error: "Failed to send message: Unregistered user" } },
    refusalText: "Unregistered user",
    secrets: [],
  },
  {
    name: "whatsapp",
    settings: (base) => ({ token: "WA-SECRET", phone_number_id: "10987", base_url: base }),
    extra: { chat_id: "4915112345678" },
    answer: (r) =>
      ok(r.method === "GET" ? { display_phone_number: "+1 555" } : { messages: [{ id: "wamid.1" }] }),
    expectSend(r, text) {
      expect(r.method).toBe("POST");
      expect(r.path).toBe("/v21.0/10987/messages");
      expect(r.headers.authorization).toBe("Bearer WA-SECRET");
      expect(r.json).toEqual({
        messaging_product: "whatsapp",
        recipient_type: "individual",
        to: "4915112345678",
        type: "text",
        text: { preview_url: false, body: text },
      });
    },
    checkPath: "/v21.0/10987",
    refusal: {
      status: 400,
      json: { error: { message: "(#131030) Recipient phone number not in allowed list", code: 131030 } },
    },
    refusalText: "Recipient phone number not in allowed list",
    secrets: ["WA-SECRET"],
  },
  {
    name: "matrix",
    settings: (base) => ({ token: "syt_MATRIX_SECRET", base_url: base }),
    extra: { chat_id: "!room:example.org" },
    answer: (r) => ok(r.method === "GET" ? { user_id: "@svc:example.org" } : { event_id: "$e1" }),
    expectSend(r, text) {
      expect(r.method).toBe("PUT");
      expect(r.path).toMatch(
        /^\/_matrix\/client\/v3\/rooms\/!room%3Aexample\.org\/send\/m\.room\.message\/svc-alerts-d1-0-[\w-]{8}$/,
      );
      expect(r.headers.authorization).toBe("Bearer syt_MATRIX_SECRET");
      expect(r.json).toEqual({ msgtype: "m.text", body: text, "m.mentions": {} });
    },
    checkPath: "/_matrix/client/v3/account/whoami",
    refusal: { status: 403, json: { errcode: "M_FORBIDDEN", error: "User @svc:example.org not in room" } },
    refusalText: "not in room",
    secrets: ["syt_MATRIX_SECRET"],
  },
  {
    name: "mattermost",
    settings: (base) => ({ token: "MM-SECRET", base_url: base }),
    extra: { chat_id: "chan1", thread_id: "root9" },
    answer: (r) => (r.method === "GET" ? ok({ username: "svc" }) : { status: 201, json: { id: "p1" } }),
    expectSend(r, text) {
      expect(r.method).toBe("POST");
      expect(r.path).toBe("/api/v4/posts");
      expect(r.headers.authorization).toBe("Bearer MM-SECRET");
      expect(r.json).toEqual({
        channel_id: "chan1",
        message: text,
        root_id: "root9",
        // The same on every attempt of a part: Mattermost answers a repeat with the post it made.
        pending_post_id: expect.stringMatching(/^[\w-]{32}$/),
      });
    },
    checkPath: "/api/v4/users/me",
    refusal: {
      status: 403,
      json: {
        id: "api.context.permissions.app_error",
        message: "You do not have the appropriate permissions.",
      },
    },
    refusalText: "appropriate permissions",
    secrets: ["MM-SECRET"],
  },
  {
    name: "dingtalk",
    settings: (base) => ({ client_id: "dingAPPKEY", client_secret: "DT-SECRET", base_url: base }),
    extra: { chat_id: "cidGROUP==" },
    answer: (r) =>
      ok(
        r.path === "/v1.0/oauth2/accessToken"
          ? { accessToken: "DT-ACCESS", expireIn: 7200 }
          : { processQueryKey: "q1" },
      ),
    expectSend(r, text) {
      expect(r.method).toBe("POST");
      expect(r.path).toBe("/v1.0/robot/groupMessages/send");
      expect(r.headers["x-acs-dingtalk-access-token"]).toBe("DT-ACCESS");
      expect(r.json).toEqual({
        msgParam: JSON.stringify({ content: text }),
        msgKey: "sampleText",
        openConversationId: "cidGROUP==",
        robotCode: "dingAPPKEY",
      });
    },
    checkPath: "/v1.0/oauth2/accessToken",
    refusal: {
      status: 400,
      json: { code: "invalidParameter", message: "robot is not a member of the group" },
    },
    refusalText: "robot is not a member",
    secrets: ["DT-SECRET", "DT-ACCESS"],
  },
  {
    name: "feishu",
    settings: (base) => ({ app_id: "cli_1", app_secret: "FS-SECRET", base_url: base }),
    extra: { chat_id: "oc_abc" },
    answer: (r) =>
      ok(
        r.path.endsWith("/tenant_access_token/internal")
          ? { code: 0, msg: "ok", tenant_access_token: "t-FS-ACCESS", expire: 7200 }
          : { code: 0, msg: "success" },
      ),
    expectSend(r, text) {
      expect(r.method).toBe("POST");
      expect(r.url).toBe("/open-apis/im/v1/messages?receive_id_type=chat_id");
      expect(r.headers.authorization).toBe("Bearer t-FS-ACCESS");
      // uuid: Feishu sends one message per uuid an hour, so a part sent again is not sent twice.
      expect(r.json).toEqual({
        receive_id: "oc_abc",
        msg_type: "text",
        content: JSON.stringify({ text }),
        uuid: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/),
      });
    },
    checkPath: "/open-apis/auth/v3/tenant_access_token/internal",
    refusal: ok({ code: 230002, msg: "Bot/User can NOT be out of the chat." }),
    refusalText: "can NOT be out of the chat",
    secrets: ["FS-SECRET", "t-FS-ACCESS"],
  },
  {
    name: "wecom",
    settings: (base) => ({ corp_id: "ww1", corp_secret: "WC-SECRET", agent_id: 1000002, base_url: base }),
    extra: { chat_id: "zhangsan|lisi" },
    answer: (r) =>
      ok(
        r.path === "/cgi-bin/gettoken"
          ? { errcode: 0, errmsg: "ok", access_token: "WC-ACCESS", expires_in: 7200 }
          : { errcode: 0, errmsg: "ok" },
      ),
    expectSend(r, text) {
      expect(r.method).toBe("POST");
      expect(r.url).toBe("/cgi-bin/message/send?access_token=WC-ACCESS");
      expect(r.json).toEqual({
        touser: "zhangsan|lisi",
        msgtype: "text",
        agentid: 1000002,
        text: { content: text },
      });
    },
    checkPath: "/cgi-bin/gettoken",
    refusal: ok({ errcode: 81013, errmsg: "user & party & tag all invalid" }),
    refusalText: "user & party & tag all invalid",
    secrets: ["WC-SECRET", "WC-ACCESS"],
  },
  {
    name: "weixin",
    settings: (base) => ({ app_id: "wx1", app_secret: "WX-SECRET", base_url: base }),
    extra: { chat_id: "oOPENID" },
    answer: (r) =>
      ok(
        r.path === "/cgi-bin/stable_token"
          ? { access_token: "WX-ACCESS", expires_in: 7200 }
          : { errcode: 0, errmsg: "ok" },
      ),
    expectSend(r, text) {
      expect(r.method).toBe("POST");
      expect(r.url).toBe("/cgi-bin/message/custom/send?access_token=WX-ACCESS");
      expect(r.json).toEqual({ touser: "oOPENID", msgtype: "text", text: { content: text } });
    },
    checkPath: "/cgi-bin/stable_token",
    refusal: ok({ errcode: 45015, errmsg: "response out of time limit or subscription is canceled" }),
    refusalText: "response out of time limit",
    secrets: ["WX-SECRET", "WX-ACCESS"],
  },
  {
    name: "bluebubbles",
    settings: (base) => ({ password: "BB-SECRET", base_url: base }),
    extra: { chat_id: "iMessage;-;+15555550123" },
    answer: () => ok({ status: 200, message: "Success" }),
    expectSend(r, text) {
      expect(r.method).toBe("POST");
      expect(r.path).toBe("/api/v1/message/text");
      expect(r.query.get("password")).toBe("BB-SECRET");
      const body = r.json as Record<string, unknown>;
      expect(body).toMatchObject({
        chatGuid: "iMessage;-;+15555550123",
        message: text,
        method: "apple-script",
      });
      expect(body.tempGuid).toMatch(/^[0-9a-f-]{36}$/);
    },
    checkPath: "/api/v1/ping",
    refusal: {
      status: 401,
      json: { status: 401, message: "You are not authorized to access this resource" },
    },
    refusalText: "not authorized",
    secrets: ["BB-SECRET"],
  },
  {
    name: "qqbot",
    settings: (base) => ({
      app_id: "102000",
      client_secret: "QQ-SECRET",
      base_url: base,
      token_url: `${base}/app/getAppAccessToken`,
    }),
    extra: { chat_id: "group:GROUPOPENID" },
    answer: (r) =>
      ok(
        r.path === "/app/getAppAccessToken"
          ? { access_token: "QQ-ACCESS", expires_in: "7200" }
          : { id: "m1" },
      ),
    expectSend(r, text) {
      expect(r.method).toBe("POST");
      expect(r.path).toBe("/v2/groups/GROUPOPENID/messages");
      expect(r.headers.authorization).toBe("QQBot QQ-ACCESS");
      expect(r.json).toEqual({ content: text, msg_type: 0 });
    },
    checkPath: "/app/getAppAccessToken",
    refusal: { status: 400, json: { code: 11255, message: "invalid request: group not found" } },
    refusalText: "group not found",
    secrets: ["QQ-SECRET", "QQ-ACCESS"],
  },
  {
    name: "sms",
    settings: (base) => ({
      account_sid: "AC123",
      auth_token: "TWILIO-SECRET",
      from: "+15550000000",
      base_url: base,
    }),
    extra: { chat_id: "+15551112222" },
    answer: (r) =>
      r.method === "GET"
        ? ok({ friendly_name: "svc" })
        : { status: 201, json: { sid: "SM1", status: "queued" } },
    expectSend(r, text) {
      expect(r.method).toBe("POST");
      expect(r.path).toBe("/2010-04-01/Accounts/AC123/Messages.json");
      expect(r.headers.authorization).toBe(`Basic ${Buffer.from("AC123:TWILIO-SECRET").toString("base64")}`);
      expect(r.headers["content-type"]).toBe("application/x-www-form-urlencoded");
      expect(Object.fromEntries(r.form ?? [])).toEqual({
        To: "+15551112222",
        From: "+15550000000",
        Body: text,
      });
    },
    checkPath: "/2010-04-01/Accounts/AC123.json",
    refusal: {
      status: 400,
      json: { code: 21211, message: "The 'To' number +1555 is not a valid phone number.", status: 400 },
    },
    refusalText: "is not a valid phone number",
    secrets: ["TWILIO-SECRET"],
  },
  {
    name: "home_automation",
    settings: (base) => ({ token: "HA-SECRET", base_url: base }),
    extra: { chat_id: "mobile_app_pixel", title: "CI" },
    answer: (r) => ok(r.method === "GET" ? { location_name: "Home", version: "2024.11.2" } : []),
    expectSend(r, text) {
      expect(r.method).toBe("POST");
      expect(r.path).toBe("/api/services/notify/mobile_app_pixel");
      expect(r.headers.authorization).toBe("Bearer HA-SECRET");
      expect(r.json).toEqual({ message: text, title: "CI" });
    },
    checkPath: "/api/config",
    refusal: { status: 400, text: "400: Bad Request — service notify.mobile_app_pixel not found" },
    refusalText: "not found",
    secrets: ["HA-SECRET"],
  },
];

let fake: FakeApi;
beforeAll(async () => {
  fake = await startFakeApi();
});
afterAll(() => fake.close());

describe.each(CASES)("$name adapter against a local fake of its API", (c) => {
  const target = () => {
    const registry = registryFor({ [c.name]: { enabled: true, ...c.settings(fake.url) } });
    const t = registry.get(c.name);
    if (t === undefined) throw new Error(`${c.name} not built`);
    return t;
  };

  it("sends the exact request the platform documents", async () => {
    fake.requests.length = 0;
    fake.setHandler(c.answer);
    const receipt = await target().send(message("Build #12 failed on main", c.extra));
    const last = fake.requests.at(-1);
    if (last === undefined) throw new Error("no request reached the fake");
    c.expectSend(last, "Build #12 failed on main");
    expect(receipt.chatId).toBeDefined();
  });

  it("checks its credentials against the platform at startup", async () => {
    fake.requests.length = 0;
    fake.setHandler(c.answer);
    await target().check?.();
    expect(fake.requests.map((r) => r.path)).toContain(c.checkPath);
  });

  it("fails with the platform's error text and never with a secret", async () => {
    fake.requests.length = 0;
    fake.setHandler((r) => {
      const isToken = /token|accessToken|getAppAccessToken/i.test(r.path);
      return isToken ? c.answer(r) : c.refusal;
    });
    const error = await target()
      .send(message("hello", c.extra))
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(DeliveryError);
    const text = (error as DeliveryError).message;
    expect(text).toContain(c.refusalText);
    expect((error as DeliveryError).transient).toBe(false);
    for (const secret of c.secrets) expect(text).not.toContain(secret);
  });
  it("a 2xx answer that is not the platform's JSON (an HTML login or proxy page) fails: nothing was delivered", async () => {
    const isToken = (r: RecordedRequest) => /token|accessToken|getAppAccessToken/i.test(r.path);
    const page: FakeReply = {
      status: 200,
      headers: { "content-type": "text/html" },
      text: "<html>captive portal BB-SECRET</html>",
    };
    fake.setHandler((r) => (isToken(r) ? c.answer(r) : page));
    const error = await sendError(
      registryFor({ [c.name]: { enabled: true, ...c.settings(fake.url) } }),
      c.name,
      message("hello", c.extra),
    );
    expect(error).toBeInstanceOf(DeliveryError);
    expect((error as DeliveryError).transient).toBe(false);
    const text = (error as DeliveryError).message;
    expect(text).toContain(`HTTP 200 with text/html "<html>captive portal `);
    expect(text).toContain(`where the ${c.name} API answers JSON — not counted as sent; check base_url`);
    for (const secret of c.secrets) expect(text).not.toContain(secret);
  });

  it("reports 429 (with Retry-After) and 5xx as transient, for the retrying deliverer", async () => {
    const isToken = (r: RecordedRequest) => /token|accessToken|getAppAccessToken/i.test(r.path);
    for (const [reply, retryAfter] of [
      [{ status: 429, headers: { "retry-after": "2" }, json: { message: "slow down" } }, 2],
      [{ status: 503, text: "Service Unavailable" }, undefined],
    ] as const) {
      fake.setHandler((r) => (isToken(r) ? c.answer(r) : reply));
      const error = await target()
        .send(message("hello", c.extra))
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(error).toBeInstanceOf(DeliveryError);
      expect((error as DeliveryError).transient).toBe(true);
      expect((error as DeliveryError).retryAfterSeconds).toBe(retryAfter);
    }
  });
});

describe("chat_id fallback", () => {
  it("uses the platform's home channel when deliver_extra.chat_id is absent", async () => {
    fake.requests.length = 0;
    fake.setHandler(() => ok({ id: "1" }));
    const registry = registryFor({
      chat_2: { enabled: true, token: "t0ken", home_channel: 999, base_url: fake.url },
    });
    const receipt = await registry.get("chat_2")?.send(message("hi"));
    expect(fake.requests[0]?.path).toBe("/api/v10/channels/999/messages");
    expect(receipt?.chatId).toBe("999");
  });

  it("refuses without a chat id or home channel, sending nothing", async () => {
    fake.requests.length = 0;
    const registry = registryFor({ discord: { enabled: true, token: "t0ken", base_url: fake.url } });
    await expect(registry.get("discord")?.send(message("hi"))).rejects.toThrow(
      /set deliver_extra\.chat_id.*home_channel/,
    );
    expect(fake.requests).toHaveLength(0);
  });
});

describe("Home Assistant without a notify service", () => {
  it("creates a persistent notification (a service every Home Assistant has; notify.notify exists only with a notify platform)", async () => {
    fake.requests.length = 0;
    fake.setHandler(() => ok([]));
    const registry = registryFor({
      homeassistant: { enabled: true, token: "HA-SECRET", base_url: fake.url },
    });
    await registry.get("homeassistant")?.send(message("Door open"));
    expect(fake.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      "POST /api/services/persistent_notification/create",
    ]);
    expect(fake.requests[0]?.headers.authorization).toBe("Bearer HA-SECRET");
    expect(fake.requests[0]?.json).toEqual({ message: "Door open", title: "svc: alerts" });
    fake.requests.length = 0;
    await registry.get("homeassistant")?.send(message("Door open", { title: "Front door" }));
    expect(fake.requests[0]?.json).toEqual({ message: "Door open", title: "Front door" });
  });

  it("a service the payload rendered empty is refused, not replaced by home_channel or a persistent notification", async () => {
    fake.requests.length = 0;
    fake.setHandler(() => ok([]));
    const registry = registryFor({
      homeassistant: {
        enabled: true,
        token: "HA-SECRET",
        base_url: fake.url,
        home_channel: "mobile_app_ops",
      },
    });
    for (const extra of [{ chat_id: "" }, { service: "  " }])
      await expect(registry.get("homeassistant")?.send(message("steered", extra))).rejects.toThrow(
        /home_automation: deliver_extra\.(chat_id|service) of route "alerts" rendered empty — the message is not sent/,
      );
    expect(fake.requests).toHaveLength(0);
  });
});

describe("Home Assistant: a service template the event did not fill", () => {
  it("fails saying so, sending nothing", async () => {
    fake.requests.length = 0;
    fake.setHandler(() => ok([]));
    const registry = registryFor({
      homeassistant: { enabled: true, token: "HA-SECRET", base_url: fake.url },
    });
    await expect(
      registry.get("homeassistant")?.send(message("x", { service: "{device.notify}" })),
    ).rejects.toThrow(
      'home_automation: "{device.notify}" is not a notify service name (lower-case letters, digits, "_") (a template the event did not fill: it has no such field)',
    );
    expect(fake.requests).toHaveLength(0);
  });

  it("a service the event filled with a JSON null fails saying so, sending nothing (no service notify.null)", async () => {
    fake.requests.length = 0;
    fake.setHandler(() => ok([]));
    const registry = registryFor({
      homeassistant: { enabled: true, token: "HA-SECRET", base_url: fake.url },
    });
    for (const extra of [{ service: "null" }, { chat_id: "notify.null" }])
      await expect(registry.get("homeassistant")?.send(message("x", extra))).rejects.toThrow(
        /^home_automation: deliver_extra\.(service|chat_id) of route "alerts" did not resolve \(the event's field is null\) — the message is not sent \(never redirected to another service\)$/,
      );
    expect(fake.requests).toHaveLength(0);
  });
});

describe("threads and topics", () => {
  it("posts a Discord message with deliver_extra.thread_id to the thread's own channel", async () => {
    fake.requests.length = 0;
    fake.setHandler(() => ok({ id: "1" }));
    const registry = registryFor({ discord: { enabled: true, token: "t0ken", base_url: fake.url } });
    await registry.get("discord")?.send(message("hi", { chat_id: "100", thread_id: "200" }));
    expect(fake.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      "POST /api/v10/channels/200/messages",
    ]);
  });
});

describe("platform-specific transient refusals", () => {
  it("treats WhatsApp Cloud API throttling (error.code 130429 in an HTTP 400) as transient, and 131030 as final", async () => {
    const registry = registryFor({
      whatsapp: { enabled: true, token: "t0ken", phone_number_id: "1", base_url: fake.url },
    });
    const outcome = async (code: number) => {
      fake.setHandler(() => ({
        status: 400,
        json: { error: { message: `(#${code}) refused`, type: "OAuthException", code } },
      }));
      const error = await sendError(registry, "whatsapp", message("hi", { chat_id: "4915112345678" }));
      expect(error).toBeInstanceOf(DeliveryError);
      return (error as DeliveryError).transient;
    };
    expect(await outcome(130429)).toBe(true);
    expect(await outcome(131056)).toBe(true);
    // "Service unavailable": a service is temporarily unavailable, try again later.
    expect(await outcome(131016)).toBe(true);
    expect(await outcome(131030)).toBe(false);
  });
});

describe("Home Assistant: the startup check", () => {
  it("is connected as the installation's name and version, not GET /api/'s 'API running.'", async () => {
    const registry = registryFor({
      homeassistant: { enabled: true, token: "HA-SECRET", base_url: fake.url },
    });
    fake.setHandler((r) =>
      r.path === "/api/config"
        ? ok({ location_name: "Home", version: "2024.11.2", components: [] })
        : r.path === "/api/"
          ? ok({ message: "API running." })
          : { status: 404, text: "404: Not Found" },
    );
    await expect(registry.get("homeassistant")?.check?.()).resolves.toBe("Home (Home Assistant 2024.11.2)");
  });
});

describe("WhatsApp: a refusal's error_data.details", () => {
  it("are added to the failure: the Cloud API says what to do only there", async () => {
    const registry = registryFor({
      whatsapp: { enabled: true, token: "t0ken", phone_number_id: "1", base_url: fake.url },
    });
    fake.setHandler(() => ({
      status: 400,
      json: {
        error: {
          message: "(#131047) Re-engagement message",
          type: "OAuthException",
          code: 131047,
          error_data: {
            messaging_product: "whatsapp",
            details:
              "Message failed to send because more than 24 hours have passed since the customer last replied to this number.",
          },
          fbtrace_id: "A1",
        },
      },
    }));
    const error = await sendError(registry, "whatsapp", message("hi", { chat_id: "4915112345678" }));
    expect((error as DeliveryError).transient).toBe(false);
    expect((error as Error).message).toBe(
      "whatsapp: send message: HTTP 400 — (#131047) Re-engagement message: Message failed to send because more than 24 hours have passed since the customer last replied to this number.",
    );
  });
});

describe("BlueBubbles: a message iMessage refused", () => {
  it("names the iMessage error code BlueBubbles attaches in data.error", async () => {
    const registry = registryFor({
      bluebubbles: { enabled: true, password: "pw", base_url: fake.url, home_channel: "iMessage;-;+1555" },
    });
    fake.setHandler(() => ({
      status: 500,
      json: {
        status: 500,
        message: "Message Send Error",
        error: {
          type: "iMessage Error",
          message: "Failed to send message! See attached message error code.",
        },
        data: { guid: "temp-1", text: "hi", error: 22 },
      },
    }));
    const error = await sendError(registry, "bluebubbles", message("hi"));
    expect((error as Error).message).toBe(
      "bluebubbles: message/text: HTTP 500 — Failed to send message! See attached message error code. (iMessage error 22)",
    );
  });
});

describe("DingTalk QPS limits (HTTP 403 Forbidden.AccessDenied.QpsLimit…)", () => {
  it("treats the API gateway's QPS refusals as transient, and another 403 as final", async () => {
    const registry = registryFor({
      dingtalk: { enabled: true, client_id: "ding1", client_secret: "s3cret", base_url: fake.url },
    });
    const outcome = async (code: string) => {
      fake.setHandler((r) =>
        r.path === "/v1.0/oauth2/accessToken"
          ? ok({ accessToken: "DT", expireIn: 7200 })
          : { status: 403, json: { code, message: "refused", requestid: "r1" } },
      );
      const error = await sendError(registry, "dingtalk", message("hi", { chat_id: "cid1==" }));
      expect(error).toBeInstanceOf(DeliveryError);
      return (error as DeliveryError).transient;
    };
    expect(await outcome("Forbidden.AccessDenied.QpsLimitForApi")).toBe(true);
    expect(await outcome("Forbidden.AccessDenied.QpsLimitForAppkeyAndApi")).toBe(true);
    expect(await outcome("Forbidden.AccessDenied.AccessTokenPermissionDenied")).toBe(false);
  });
});

describe("Feishu rate limits (HTTP 429, or 400 with code 99991400, and x-ogw-ratelimit-reset)", () => {
  it.each([429, 400])(
    "HTTP %i with code 99991400 is transient and waits x-ogw-ratelimit-reset",
    async (status) => {
      fake.setHandler((r) =>
        r.path.includes("tenant_access_token")
          ? ok({ code: 0, tenant_access_token: "t-1", expire: 7200 })
          : {
              status,
              headers: { "x-ogw-ratelimit-limit": "100", "x-ogw-ratelimit-reset": "52" },
              json: { code: 99991400, msg: "request trigger frequency limit" },
            },
      );
      const registry = registryFor({
        feishu: { enabled: true, app_id: "cli_1", app_secret: "s3cret", base_url: fake.url },
      });
      const error = await sendError(registry, "feishu", message("hi", { chat_id: "oc_1" }));
      expect(error).toBeInstanceOf(DeliveryError);
      expect((error as DeliveryError).transient).toBe(true);
      expect((error as DeliveryError).retryAfterSeconds).toBe(52);
    },
  );
});

describe("Feishu's message rate limit (code 230020, 5 messages a second per chat)", () => {
  it.each([
    [400, 230020],
    [200, 230020],
    [200, 99991400],
  ])("HTTP %i with code %i is transient", async (status, code) => {
    fake.setHandler((r) =>
      r.path.includes("tenant_access_token")
        ? ok({ code: 0, tenant_access_token: "t-1", expire: 7200 })
        : { status, json: { code, msg: "This operation triggers the frequency limit." } },
    );
    const registry = registryFor({
      feishu: { enabled: true, app_id: "cli_1", app_secret: "s3cret", base_url: fake.url },
    });
    const error = await sendError(registry, "feishu", message("hi", { chat_id: "oc_1" }));
    expect(error).toBeInstanceOf(DeliveryError);
    expect((error as DeliveryError).transient).toBe(true);
  });

  it("keeps another refusal final (230002: the bot is not in the chat)", async () => {
    fake.setHandler((r) =>
      r.path.includes("tenant_access_token")
        ? ok({ code: 0, tenant_access_token: "t-1", expire: 7200 })
        : { status: 400, json: { code: 230002, msg: "Bot/User can NOT be out of the chat." } },
    );
    const registry = registryFor({
      feishu: { enabled: true, app_id: "cli_1", app_secret: "s3cret", base_url: fake.url },
    });
    const error = await sendError(registry, "feishu", message("hi", { chat_id: "oc_1" }));
    expect((error as DeliveryError).transient).toBe(false);
  });
});

describe("QQ chat ids", () => {
  it.each(["group:", "user:", "channel:", "group: "])(
    "%j (a kind with no id after it) is refused before any message request",
    async (chatId) => {
      fake.requests.length = 0;
      fake.setHandler((r) =>
        ok(r.path === "/app/getAppAccessToken" ? { access_token: "A", expires_in: 7200 } : { id: "m1" }),
      );
      const registry = registryFor({
        qqbot: {
          enabled: true,
          app_id: "1",
          client_secret: "s3cret",
          base_url: fake.url,
          token_url: `${fake.url}/app/getAppAccessToken`,
        },
      });
      const error = await sendError(registry, "qqbot", message("hi", { chat_id: chatId }));
      expect(error).toBeInstanceOf(DeliveryError);
      const kind = chatId.split(":")[0];
      const form = { group: "group:<group_openid>", user: "user:<openid>", channel: "channel:<channel_id>" }[
        kind as string
      ];
      expect((error as DeliveryError).message).toBe(
        `qqbot: chat id "${chatId.trim()}" has no id after "${kind}:" — the message is not sent; write ${form}`,
      );
      expect(fake.requests.filter((r) => r.path.endsWith("/messages"))).toEqual([]);
    },
  );
});

describe("2xx answers that are not the platform's", () => {
  it("an empty 200 fails where the API always answers JSON (Discord); Signal's empty 201 is a send", async () => {
    fake.setHandler(() => ({ status: 200 }));
    const discord = registryFor({ discord: { enabled: true, token: "t0ken", base_url: fake.url } });
    const error = await sendError(discord, "discord", message("hi", { chat_id: "1" }));
    expect((error as DeliveryError).message).toBe(
      "discord: create message: HTTP 200 with an empty body, where the discord API answers JSON — not counted as sent; check base_url (a proxy, captive portal or login page may be answering)",
    );
    fake.setHandler(() => ({ status: 201 }));
    const signal = registryFor({ signal: { enabled: true, number: "+15550001111", base_url: fake.url } });
    await expect(
      signal.get("signal")?.send(message("hi", { chat_id: "+15550002222" })),
    ).resolves.toMatchObject({
      chatId: "+15550002222",
    });
  });

  it.each([
    ["wecom", { corp_id: "c", corp_secret: "s3cret", agent_id: 1 }, "/cgi-bin/gettoken"],
    ["weixin", { app_id: "wx1", app_secret: "s3cret" }, "/cgi-bin/stable_token"],
  ] as const)(
    "%s: JSON without an errcode is not the platform's answer (it was read as errcode 0)",
    async (name, settings, tokenPath) => {
      const registry = registryFor({ [name]: { enabled: true, ...settings, base_url: fake.url } });
      fake.setHandler((r) =>
        ok(r.path === tokenPath ? { access_token: "A", expires_in: 7200 } : { status: "ok" }),
      );
      const error = await sendError(registry, name, message("hi", { chat_id: "u1" }));
      expect(error).toBeInstanceOf(DeliveryError);
      expect((error as DeliveryError).message).toBe(
        `${name}: send message: the answer has no errcode ({"status":"ok"}), so it is not the ${name} API's — check base_url`,
      );
    },
  );
});

it("wecom: a JSON answer without an errcode that echoes the access token across the 80-character cut leaves no beginning of it", async () => {
  const token = "ACCESSTOKEN0123456789abcdefghijklmnop";
  const registry = registryFor({
    wecom: { enabled: true, corp_id: "c", corp_secret: "s3cret", agent_id: 1, base_url: fake.url },
  });
  fake.setHandler((r) =>
    ok(
      r.path === "/cgi-bin/gettoken"
        ? { access_token: token, expires_in: 7200 }
        : { url: `/api/v1/proxy/cgi-bin/message/send?access_token=${token}` },
    ),
  );
  const error = await sendError(registry, "wecom", message("hi", { chat_id: "u1" }));
  expect((error as DeliveryError).message).toContain("access_token=[redacted]");
  expect((error as DeliveryError).message).not.toContain("ACCESSTOKEN");
});

it("wecom: a JSON answer without an errcode quoted cut at 80 characters right inside an emoji leaves the emoji out whole", async () => {
  const registry = registryFor({
    wecom: { enabled: true, corp_id: "c", corp_secret: "s3cret", agent_id: 1, base_url: fake.url },
  });
  // `{"m":"` and 73 x: the 80th character is the first half of the emoji.
  fake.setHandler((r) =>
    ok(
      r.path === "/cgi-bin/gettoken" ? { access_token: "t", expires_in: 7200 } : { m: `${"x".repeat(73)}🚀` },
    ),
  );
  const error = await sendError(registry, "wecom", message("hi", { chat_id: "u1" }));
  expect((error as DeliveryError).message).toContain(
    `(${JSON.stringify({ m: "x".repeat(73) }).slice(0, -2)}),`,
  );
  expect((error as DeliveryError).message).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|\ufffd/);
});

describe("WeCom / Weixin errcode -1 (system busy, try again later)", () => {
  it.each([
    ["wecom", { corp_id: "c", corp_secret: "s3cret", agent_id: 1 }, "/cgi-bin/gettoken"],
    ["weixin", { app_id: "wx1", app_secret: "s3cret" }, "/cgi-bin/stable_token"],
  ] as const)(
    "%s: a 200 answer with errcode -1 is transient; 40003 is final",
    async (name, settings, tokenPath) => {
      const registry = registryFor({ [name]: { enabled: true, ...settings, base_url: fake.url } });
      const outcome = async (errcode: number) => {
        fake.setHandler((r) =>
          ok(r.path === tokenPath ? { access_token: "A", expires_in: 7200 } : { errcode, errmsg: "refused" }),
        );
        const error = await sendError(registry, name, message("hi", { chat_id: "u1" }));
        expect(error).toBeInstanceOf(DeliveryError);
        return (error as DeliveryError).transient;
      };
      expect(await outcome(-1)).toBe(true);
      expect(await outcome(40003)).toBe(false);
    },
  );
});

describe("WeCom errcode 45033 (api concurrent out of limit)", () => {
  it("is transient: a later attempt passes once the calls at the same moment are done", async () => {
    const registry = registryFor({
      wecom: { enabled: true, corp_id: "c", corp_secret: "s3cret", agent_id: 1, base_url: fake.url },
    });
    fake.setHandler((r) =>
      ok(
        r.path === "/cgi-bin/gettoken"
          ? { access_token: "A", expires_in: 7200 }
          : { errcode: 45033, errmsg: "api concurrent out of limit, hint: [1620808383_162_662d]" },
      ),
    );
    const error = await sendError(registry, "wecom", message("hi", { chat_id: "u1" }));
    expect(error).toBeInstanceOf(DeliveryError);
    expect((error as DeliveryError).transient).toBe(true);
    expect((error as DeliveryError).message).toContain("45033 api concurrent out of limit");
  });
});

describe("errcode 45009: WeCom's per-minute call limit, Weixin's daily quota", () => {
  const refuse = (tokenPath: string, errmsg: string) =>
    fake.setHandler((r) =>
      ok(r.path === tokenPath ? { access_token: "A", expires_in: 7200 } : { errcode: 45009, errmsg }),
    );

  it("WeCom: transient, retried after a minute (WeCom refuses the app's calls for one)", async () => {
    const registry = registryFor({
      wecom: { enabled: true, corp_id: "c", corp_secret: "s3cret", agent_id: 1, base_url: fake.url },
    });
    refuse("/cgi-bin/gettoken", "api freq out of limit, hint: [1634264791_224_ada1]");
    const error = await sendError(registry, "wecom", message("hi", { chat_id: "u1" }));
    expect((error as DeliveryError).transient).toBe(true);
    expect((error as DeliveryError).retryAfterSeconds).toBe(60);
    expect((error as DeliveryError).message).toContain("45009 api freq out of limit");
  });

  it("Weixin: final (the day's quota is used up)", async () => {
    const registry = registryFor({
      weixin: { enabled: true, app_id: "wx1", app_secret: "s3cret", base_url: fake.url },
    });
    refuse("/cgi-bin/stable_token", "reach max api daily quota limit rid: 6350ba59");
    const error = await sendError(registry, "weixin", message("hi", { chat_id: "oOPENID" }));
    expect((error as DeliveryError).transient).toBe(false);
  });
});

describe("Weixin errcode 45011 (api minute-quota reach limit, retry next minute)", () => {
  it("is transient and waits into the next minute", async () => {
    const registry = registryFor({
      weixin: { enabled: true, app_id: "wx1", app_secret: "s3cret", base_url: fake.url },
    });
    fake.setHandler((r) =>
      ok(
        r.path === "/cgi-bin/stable_token"
          ? { access_token: "A", expires_in: 7200 }
          : { errcode: 45011, errmsg: "api minute-quota reach limit mustslower retry next minute" },
      ),
    );
    const error = await sendError(registry, "weixin", message("hi", { chat_id: "oOPENID" }));
    expect(error).toBeInstanceOf(DeliveryError);
    expect((error as DeliveryError).transient).toBe(true);
    expect((error as DeliveryError).retryAfterSeconds).toBe(60);
  });
});

describe("Weixin access tokens", () => {
  it("come from POST /cgi-bin/stable_token (normal mode), which does not void the token of the account's other services", async () => {
    fake.requests.length = 0;
    fake.setHandler((r) =>
      ok(
        r.path === "/cgi-bin/stable_token"
          ? { access_token: "A", expires_in: 7200 }
          : { errcode: 0, errmsg: "ok" },
      ),
    );
    const registry = registryFor({
      weixin: { enabled: true, app_id: "wx1", app_secret: "s3cret", base_url: fake.url },
    });
    await registry.get("weixin")?.send(message("hi", { chat_id: "oOPENID" }));
    const [token] = fake.requests;
    expect(token?.method).toBe("POST");
    expect(token?.url).toBe("/cgi-bin/stable_token");
    expect(token?.json).toEqual({
      grant_type: "client_credential",
      appid: "wx1",
      secret: "s3cret",
      force_refresh: false,
    });
    expect(fake.requests.map((r) => r.path)).not.toContain("/cgi-bin/token");
  });
});

describe("Matrix rooms and threads", () => {
  const matrix = () => registryFor({ matrix: { enabled: true, token: "syt_x", base_url: fake.url } });

  it("resolves a #alias:server chat id through the room directory, once, and sends to the room ID", async () => {
    fake.requests.length = 0;
    fake.setHandler((r) =>
      ok(r.method === "GET" ? { room_id: "!abc:example.org", servers: ["example.org"] } : { event_id: "$1" }),
    );
    const registry = matrix();
    await registry.get("matrix")?.send(message("one", { chat_id: "#ops:example.org" }));
    await registry.get("matrix")?.send(message("two", { chat_id: "#ops:example.org" }, { deliveryId: "d2" }));
    // The transaction id ends in 8 characters of the text's hash.
    expect(fake.requests.map((r) => `${r.method} ${r.path.replace(/-[\w-]{8}$/, "")}`)).toEqual([
      "GET /_matrix/client/v3/directory/room/%23ops%3Aexample.org",
      "PUT /_matrix/client/v3/rooms/!abc%3Aexample.org/send/m.room.message/svc-alerts-d1-0",
      "PUT /_matrix/client/v3/rooms/!abc%3Aexample.org/send/m.room.message/svc-alerts-d2-0",
    ]);
  });

  it("the transaction id names the route: one delivery id on two routes is two messages, not one the homeserver deduplicates", async () => {
    fake.requests.length = 0;
    fake.setHandler(() => ok({ event_id: "$3" }));
    const target = matrix().get("matrix");
    await target?.send(message("deploy done", { chat_id: "!abc:example.org" }, { route: "ops" }));
    await target?.send(message("deploy done", { chat_id: "!abc:example.org" }, { route: "dev" }));
    const txns = fake.requests.map((r) =>
      r.path
        .split("/")
        .at(-1)
        ?.replace(/-[\w-]{8}$/, ""),
    );
    expect(txns).toEqual(["svc-ops-d1-0", "svc-dev-d1-0"]);
  });

  it("one delivery id run again with another reply (a GitHub redelivery after the idempotency hour) gets its own transaction id; a resend of the same text keeps it", async () => {
    fake.requests.length = 0;
    fake.setHandler(() => ok({ event_id: "$4" }));
    const target = matrix().get("matrix");
    await target?.send(message("first review", { chat_id: "!abc:example.org" }));
    await target?.send(message("first review", { chat_id: "!abc:example.org" }));
    await target?.send(message("second review", { chat_id: "!abc:example.org" }));
    const [first, resent, second] = fake.requests.map((r) => r.path.split("/").at(-1));
    expect(resent).toBe(first);
    expect(second).not.toBe(first);
    expect(second).toMatch(/^svc-alerts-d1-0-[\w-]{8}$/);
  });

  it("sends into a thread with m.relates_to rel_type m.thread when deliver_extra.thread_id is set", async () => {
    fake.requests.length = 0;
    fake.setHandler(() => ok({ event_id: "$2" }));
    await matrix()
      .get("matrix")
      ?.send(message("hi", { chat_id: "!abc:example.org", thread_id: "$root" }));
    expect(fake.requests[0]?.json).toEqual({
      msgtype: "m.text",
      body: "hi",
      "m.mentions": {},
      "m.relates_to": { rel_type: "m.thread", event_id: "$root" },
    });
  });
});

describe("long messages", () => {
  it("splits to Telegram's 4096-character limit on line boundaries and sends the parts in order", async () => {
    fake.requests.length = 0;
    fake.setHandler(() => ok({ ok: true, result: {} }));
    const lines = Array.from({ length: 300 }, (_, i) => `line ${i} ${"x".repeat(20)}`);
    const text = lines.join("\n");
    const registry = registryFor({ telegram: { enabled: true, token: "1:abc", base_url: fake.url } });
    const receipt = await registry.get("telegram")?.send(message(text, { chat_id: "5" }));
    const sent = fake.requests.map((r) => (r.json as { text: string }).text);
    expect(sent.length).toBeGreaterThan(1);
    expect(receipt?.parts).toBe(sent.length);
    expect(sent.join("")).toBe(text);
    for (const part of sent) expect(part.length).toBeLessThanOrEqual(4096);
    for (const part of sent.slice(0, -1)) expect(part.endsWith("\n")).toBe(true);
  });

  it("splits WeCom text by UTF-8 bytes (2048)", async () => {
    fake.requests.length = 0;
    fake.setHandler((r) =>
      ok(
        r.path === "/cgi-bin/gettoken" ? { errcode: 0, access_token: "A", expires_in: 7200 } : { errcode: 0 },
      ),
    );
    const text = "告警".repeat(800);
    const registry = registryFor({
      wecom: {
        enabled: true,
        corp_id: "c",
        corp_secret: "s",
        agent_id: 1,
        base_url: fake.url,
        home_channel: "@all",
      },
    });
    await registry.get("wecom")?.send(message(text));
    const sent = fake.requests
      .filter((r) => r.path === "/cgi-bin/message/send")
      .map((r) => (r.json as { text: { content: string } }).text.content);
    expect(sent.join("")).toBe(text);
    for (const part of sent) expect(Buffer.byteLength(part)).toBeLessThanOrEqual(2048);
    // The access token was fetched once and reused for every part.
    expect(fake.requests.filter((r) => r.path === "/cgi-bin/gettoken")).toHaveLength(1);
  });
});

describe("access tokens", () => {
  it("fetches a new WeCom token once when the platform says it expired (42001), even in one-attempt mode", async () => {
    fake.requests.length = 0;
    let issued = 0;
    fake.setHandler((r) => {
      if (r.path === "/cgi-bin/gettoken")
        return ok({ errcode: 0, access_token: `T${++issued}`, expires_in: 7200 });
      return ok(
        r.query.get("access_token") === "T1"
          ? { errcode: 42001, errmsg: "access_token expired" }
          : { errcode: 0 },
      );
    });
    const registry = registryFor({
      wecom: { enabled: true, corp_id: "c", corp_secret: "s", agent_id: 1, base_url: fake.url },
    });
    await registry.get("wecom")?.send(message("hi", { chat_id: "@all" }));
    expect(fake.requests.map((r) => `${r.path}?${r.query.get("access_token") ?? ""}`)).toEqual([
      "/cgi-bin/gettoken?",
      "/cgi-bin/message/send?T1",
      "/cgi-bin/gettoken?",
      "/cgi-bin/message/send?T2",
    ]);
  });

  /** A platform's refusal of a token it no longer accepts (revoked, reset with the app secret), as it answers. */
  const STALE_TOKENS = [
    {
      name: "dingtalk",
      tokenPath: "/v1.0/oauth2/accessToken",
      issue: (t: string) => ({ accessToken: t, expireIn: 7200 }),
      tokenOf: (r: RecordedRequest) => r.headers["x-acs-dingtalk-access-token"],
      stale: { status: 401, json: { code: "InvalidAuthentication", message: "不合法的access_token" } },
      sent: { processQueryKey: "q1" },
    },
    {
      name: "feishu",
      tokenPath: "/open-apis/auth/v3/tenant_access_token/internal",
      issue: (t: string) => ({ code: 0, msg: "ok", tenant_access_token: t, expire: 7200 }),
      tokenOf: (r: RecordedRequest) => r.headers.authorization?.toString().replace("Bearer ", ""),
      stale: {
        status: 400,
        json: {
          code: 99991663,
          msg: "Invalid access token for authorization. Please make a request with token attached.",
        },
      },
      sent: { code: 0, msg: "success" },
    },
    {
      name: "qqbot",
      tokenPath: "/app/getAppAccessToken",
      issue: (t: string) => ({ access_token: t, expires_in: "7200" }),
      tokenOf: (r: RecordedRequest) => r.headers.authorization?.toString().replace("QQBot ", ""),
      stale: { status: 401, json: { message: "token not exist or expire", code: 11244, err_code: 11244 } },
      sent: { id: "m1" },
    },
  ] as const;

  it.each(STALE_TOKENS)(
    "$name: a token the platform no longer accepts is fetched again and the message sent once more, even in one-attempt mode",
    async (p) => {
      fake.requests.length = 0;
      let issued = 0;
      fake.setHandler((r) => {
        if (r.path === p.tokenPath) return ok(p.issue(`T${++issued}`));
        return p.tokenOf(r) === "T1" ? p.stale : ok(p.sent);
      });
      const c = CASES.find((one) => one.name === p.name);
      if (c === undefined) throw new Error(`${p.name}: no case`);
      const registry = registryFor({ [p.name]: { enabled: true, ...c.settings(fake.url) } });
      // Direct delivery: one attempt, no retrying step runner.
      await registry.get(p.name)?.send(message("hi", c.extra));
      expect(fake.requests.map((r) => (r.path === p.tokenPath ? "token" : `send ${p.tokenOf(r)}`))).toEqual([
        "token",
        "send T1",
        "token",
        "send T2",
      ]);
      // The new token is kept: the next message goes out with it, without another fetch.
      await registry.get(p.name)?.send(message("again", c.extra));
      expect(fake.requests.at(-1)?.path).not.toBe(p.tokenPath);
      expect(p.tokenOf(fake.requests.at(-1) as RecordedRequest)).toBe("T2");
    },
  );

  it("a token refused again right after it was issued fails the delivery with the platform's error (no loop)", async () => {
    fake.requests.length = 0;
    fake.setHandler((r) =>
      r.path === "/app/getAppAccessToken"
        ? ok({ access_token: "QQ-ACCESS", expires_in: "7200" })
        : { status: 401, json: { message: "token not exist or expire", code: 11244 } },
    );
    const c = CASES.find((one) => one.name === "qqbot");
    const registry = registryFor({ qqbot: { enabled: true, ...c?.settings(fake.url) } });
    const error = await sendError(registry, "qqbot", message("hi", c?.extra));
    expect(String(error)).toContain("HTTP 401 — token not exist or expire");
    expect(fake.requests).toHaveLength(4);
  });
});
