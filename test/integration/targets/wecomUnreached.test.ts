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

  it("says nothing when every recipient was reached (empty fields)", async () => {
    const { log, target } = wecom();
    await target?.send(message("hi", { chat_id: "alice" }));
    expect(log.messages().filter((m) => m.includes("not delivered to"))).toEqual([]);
  });
});
