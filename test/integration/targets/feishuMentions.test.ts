import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { message, registryFor } from "./support.js";

/**
 * Spec 5 rule 6: payload text is untrusted. Feishu text messages read `<at user_id="all"></at>` as an
 * @all and `<at user_id="ou_…">` as a mention
 * (open.feishu.cn/document/server-docs/im-v1/message-content-description/create_json#text).
 */
let api: FakeApi;
beforeAll(async () => {
  api = await startFakeApi((r) =>
    r.path.endsWith("/tenant_access_token/internal")
      ? { json: { code: 0, msg: "ok", tenant_access_token: "t-1", expire: 7200 } }
      : { json: { code: 0, msg: "success" } },
  );
});
afterAll(() => api.close());

/** The `content` of the last message request. */
const lastContent = () => (api.requests.at(-1)?.json as { content?: string } | undefined)?.content ?? "";

/** The <at> tags Feishu would find in a text message's content. */
const atTags = (text: string) => text.match(/<at\s[^>]*>/gi) ?? [];

describe("feishu: <at> tags from payload text notify no one", () => {
  it('<at user_id="all"> and user mentions are sent as text; the text reads the same', async () => {
    const title = 'Build broke <at user_id="all"></at> and <AT user_id="ou_123">Boss</AT>';
    const registry = registryFor({
      feishu: { enabled: true, app_id: "cli_1", app_secret: "S", base_url: api.url, home_channel: "oc_1" },
    });
    await registry.get("feishu")?.send(message(title));
    const content = JSON.parse(lastContent()) as { text: string };
    expect(atTags(title)).toHaveLength(2);
    expect(atTags(content.text)).toEqual([]);
    expect(content.text.replaceAll("\u200B", "")).toBe(title);
  });

  it("other angle brackets are left alone", async () => {
    const registry = registryFor({
      feishu: { enabled: true, app_id: "cli_1", app_secret: "S", base_url: api.url, home_channel: "oc_1" },
    });
    await registry.get("feishu")?.send(message("a <b> <attention> x<at"));
    const content = JSON.parse(lastContent()) as { text: string };
    expect(content.text).toBe("a <b> <attention> x<at");
  });
});
