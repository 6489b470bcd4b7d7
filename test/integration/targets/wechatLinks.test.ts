import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { message, registryFor } from "./support.js";

/**
 * Payload text is untrusted and arrives as written. WeCom app text messages and Weixin customer-service
 * text messages render `<a href="…">text</a>` in `content` as a link that shows only its text
 * (developer.work.weixin.qq.com/document/path/90236, developers.weixin.qq.com customer-service messages).
 */
let api: FakeApi;
beforeAll(async () => {
  api = await startFakeApi((r) =>
    r.path.includes("token")
      ? { json: { errcode: 0, errmsg: "ok", access_token: "tok", expires_in: 7200 } }
      : { json: { errcode: 0, errmsg: "ok" } },
  );
});
afterAll(() => api.close());

/** The `text.content` of the last message request. */
const lastContent = () =>
  (api.requests.at(-1)?.json as { text?: { content?: string } } | undefined)?.text?.content ?? "";

/** The link tags WeCom or Weixin would render in a text message's content. */
const linkTags = (text: string) => text.match(/<a[\s>/][^>]*>/gi) ?? [];

const platforms = {
  wecom: { enabled: true, corp_id: "ww1", corp_secret: "S", agent_id: 1000002, home_channel: "@all" },
  weixin: { enabled: true, app_id: "wx1", app_secret: "S", home_channel: "oABC" },
};

describe.each(["wecom", "weixin"] as const)("%s: link tags from payload text are sent as text", (name) => {
  it("<a href> and mini-program links arrive as the text they were; the text reads the same", async () => {
    const title =
      'Reset your password <a href="https://evil.example/login">here</a> or <A\ndata-miniprogram-appid="wx9" data-miniprogram-path="p">open</A>';
    const registry = registryFor({ [name]: { ...platforms[name], base_url: api.url } });
    await registry.get(name)?.send(message(title));
    expect(linkTags(title)).toHaveLength(2);
    expect(linkTags(lastContent())).toEqual([]);
    expect(lastContent().replaceAll("\u200B", "")).toBe(title);
  });

  it("other angle brackets are left alone", async () => {
    const registry = registryFor({ [name]: { ...platforms[name], base_url: api.url } });
    await registry.get(name)?.send(message("a <b> <abbr> x<a 1 < 2"));
    expect(lastContent()).toBe("a <b> <abbr> x<\u200Ba 1 < 2");
  });
});
