import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configSchema } from "../../../src/config/schema.js";
import { createTargets } from "../../../src/io/targets/registry.js";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { message } from "./support.js";

/**
 * WeCom sends an app message to the recipients it can reach and answers errcode 0 naming the others
 * (`invaliduser`, `invalidparty`, `invalidtag`, `unlicenseduser`); only when it reaches none does it
 * answer 81013. The delivery counts as sent, and a warning names who did not get it.
 */
let fake: FakeApi;
beforeAll(async () => {
  fake = await startFakeApi((r) =>
    r.path === "/cgi-bin/gettoken"
      ? { json: { errcode: 0, access_token: "WC-ACCESS", expires_in: 7200 } }
      : {
          json: {
            errcode: 0,
            errmsg: "ok",
            invaliduser: r.text.includes("bob") ? "bob" : "",
            invalidparty: "",
            invalidtag: "",
            unlicenseduser: "",
            msgid: "m1",
          },
        },
  );
});
afterAll(() => fake.close());

function wecom() {
  const log = captureLogger();
  const config = configSchema.parse({
    platforms: {
      wecom: {
        enabled: true,
        corp_id: "ww1",
        corp_secret: "WC-SECRET",
        agent_id: 1000002,
        base_url: fake.url,
      },
    },
  });
  return { log, target: createTargets(config, { logger: log.logger }).get("wecom") };
}

describe("wecom: recipients WeCom did not reach", () => {
  it("warns once per delivery naming them, and the delivery succeeds", async () => {
    const { log, target } = wecom();
    const text = `${"a".repeat(2000)}\n${"b".repeat(100)}`;
    await expect(target?.send(message(text, { chat_id: "alice|bob" }))).resolves.toMatchObject({ parts: 2 });
    expect(log.messages().filter((m) => m.includes("not delivered to"))).toEqual([
      '[delivery] wecom: route "alerts": not delivered to invaliduser bob (unknown, outside the app\'s visible range, or unlicensed) — the other recipients of "alice|bob" got it',
    ]);
  });

  it("sends nothing to recipients the event filled into a templated chat_id (alice|bob, @all); the route's own list is sent", async () => {
    const { target } = wecom();
    const written = { written: { chat_id: "{user}" } };
    const sent = () => fake.requests.filter((r) => r.path === "/cgi-bin/message/send").length;
    const before = sent();
    await expect(target?.send(message("hi", { chat_id: "alice|bob" }, written))).rejects.toThrow(
      'wecom: route "alerts": deliver_extra.chat_id rendered "alice|bob": the event filled in 2 user ids joined with "|" where the route writes 1; not sent — a list of recipients belongs in the route\'s chat_id itself or platforms.wecom.home_channel',
    );
    await expect(target?.send(message("hi", { chat_id: "@all" }, written))).rejects.toThrow(
      'wecom: route "alerts": deliver_extra.chat_id rendered "@all": the event filled in @all, which WeCom sends to everyone; not sent',
    );
    // WeCom's ids are case-insensitive: @ALL, as a second id too.
    await expect(
      target?.send(message("hi", { chat_id: "alice|@ALL" }, { written: { chat_id: "alice|{user}" } })),
    ).rejects.toThrow("the event filled in @all, which WeCom sends to everyone; not sent");
    expect(sent()).toBe(before);
    await target?.send(message("hi", { chat_id: "alice" }, written));
    await target?.send(message("hi", { chat_id: "alice|carol" }, { written: { chat_id: "{user}|carol" } }));
    await target?.send(message("hi", { chat_id: "@all" }, { written: { chat_id: "@all" } }));
    expect(sent()).toBe(before + 3);
  });

  it("says nothing when every recipient was reached (empty fields)", async () => {
    const { log, target } = wecom();
    await target?.send(message("hi", { chat_id: "alice" }));
    expect(log.messages().filter((m) => m.includes("not delivered to"))).toEqual([]);
  });
});
