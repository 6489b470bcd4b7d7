import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { message, registryFor } from "./support.js";

/**
 * Spec 5 rule 6: payload text is untrusted. QQ reads a message's content as its text chain: `@everyone`
 * and `<qqbot-at-everyone />` mention every member, `<@id>`, `<@!id>` and `<qqbot-at-user id="…" />`
 * one member (bot.q.qq.com/wiki/develop/api-v2/server-inter/message/trans/text-chain.html), in channel,
 * group and direct messages alike.
 */
let api: FakeApi;
beforeAll(async () => {
  api = await startFakeApi((r) =>
    r.path === "/app/getAppAccessToken"
      ? { json: { access_token: "qq-token", expires_in: "7200" } }
      : { json: { id: "m1", timestamp: "2026-11-30T00:00:00+08:00" } },
  );
});
afterAll(() => api.close());

const qqbot = (home: string) =>
  registryFor({
    qqbot: {
      enabled: true,
      app_id: "102000000",
      client_secret: "S",
      base_url: api.url,
      token_url: `${api.url}/app/getAppAccessToken`,
      home_channel: home,
    },
  });

/** The `content` of the last message request. */
const lastContent = () => (api.requests.at(-1)?.json as { content?: string } | undefined)?.content ?? "";

/** What QQ would read as a mention in a message's content. */
const mentions = (text: string) =>
  text.match(/@everyone|<@!?\w+>|<qqbot-at-(?:user|everyone)\b[^>]*>/gi) ?? [];

describe("qqbot: mentions from payload text notify no one", () => {
  const text =
    'Deploy failed @everyone <qqbot-at-everyone /> cc <@1234> <@!5678> <qqbot-at-user id="ABCDEF" />';

  for (const home of ["channel:9001", "group:GROUP1", "user:USER1"]) {
    it(`${home.split(":")[0]} message: the text reads the same, with no mention left in it`, async () => {
      await qqbot(home).get("qqbot")?.send(message(text));
      expect(mentions(text)).toHaveLength(5);
      expect(mentions(lastContent())).toEqual([]);
      expect(lastContent().replaceAll("\u200B", "")).toBe(text);
    });
  }

  it("other text is left alone (an address, angle brackets, a channel link)", async () => {
    const plain = "mail ops@everyone.example? no: ops@example.org <b> a<b <#123> x@y";
    await qqbot("channel:9001").get("qqbot")?.send(message(plain));
    expect(lastContent()).toBe(plain.replace("@everyone", "@\u200Beveryone"));
  });
});
