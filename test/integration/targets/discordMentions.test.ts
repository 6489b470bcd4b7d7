import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createdMessages, startFakeDiscord } from "../../fakes/discord.js";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { message, registryFor } from "./support.js";

/**
 * Spec 5 rule 6: payload text is untrusted. A Discord message whose text comes from a payload must not
 * ping `@everyone`, `@here`, roles or users: every message is sent with `allowed_mentions: {parse: []}`
 * (https://discord.com/developers/docs/resources/message#allowed-mentions-object). The text is unchanged.
 */
const OPEN = "INSECURE_NO_AUTH";
let discord: FakeApi;
let gw: TestGateway;
beforeAll(async () => {
  discord = await startFakeApi((r) => ({ json: r.method === "GET" ? { username: "svc" } : { id: "1" } }));
  gw = await startTestGateway({
    config: webhookConfig(
      {
        issue: {
          secret: OPEN,
          prompt: "New issue: {issue.title}",
          deliver: "discord",
          deliver_only: true,
          deliver_extra: { chat_id: "555000111" },
        },
      },
      { rate_limit: 1000 },
      { platforms: { discord: { enabled: true, token: "DISCORD-TOKEN", base_url: discord.url } } },
    ),
  });
});
afterAll(async () => {
  await gw.stop();
  await discord.close();
});

describe("discord: mentions from payload text never ping", () => {
  it("sends the text as is with allowed_mentions parse [] (no @everyone, @here, role or user pings)", async () => {
    const title = "@everyone free nitro <@&123456> <@42> @here";
    const res = await postJson(gw.url("/webhooks/issue"), { issue: { title } });
    expect(res).toMatchObject({ status: 200, body: { status: "delivered", target: "discord" } });
    const sent = discord.requests.filter((r) => r.method === "POST");
    expect(sent).toHaveLength(1);
    expect(sent[0]?.path).toBe("/api/v10/channels/555000111/messages");
    expect(sent[0]?.json).toMatchObject({ content: `New issue: ${title}`, allowed_mentions: { parse: [] } });
  });
});

describe("discord: against a fake that pings as Discord reads the content", () => {
  it("a long text full of mentions, split in parts, pings no one in any part", async () => {
    const faithful = await startFakeDiscord("D-TOKEN");
    try {
      const target = registryFor({
        discord: { enabled: true, token: "D-TOKEN", base_url: faithful.url, home_channel: "555000111" },
      }).get("discord");
      const line = "@everyone @here <@42> <@!43> <@&123456> look at this";
      const text = Array.from({ length: 80 }, () => line).join("\n");
      await expect(target?.send(message(text))).resolves.toMatchObject({ parts: 3 });
      const created = createdMessages(faithful);
      expect(created.map((m) => m.content).join("")).toBe(text);
      for (const posted of created)
        expect(posted).toMatchObject({ mention_everyone: false, mentions: [], mention_roles: [] });
      // The same line sent without allowed_mentions, as a client that leaves it out does, pings them all:
      const unguarded = await fetch(`${faithful.url}/api/v10/channels/555000111/messages`, {
        method: "POST",
        headers: { authorization: "Bot D-TOKEN", "content-type": "application/json" },
        body: JSON.stringify({ content: line }),
      });
      expect(await unguarded.json()).toMatchObject({
        mention_everyone: true,
        mentions: [{ id: "42" }, { id: "43" }],
        mention_roles: ["123456"],
      });
    } finally {
      await faithful.close();
    }
  });
});
