import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createdMessages, startFakeDiscord } from "../../fakes/discord.js";
import type { FakeApi } from "../../fakes/httpFake.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * A Discord thread is a channel of its own (messages to it go to /channels/<thread id>/messages), so a
 * route whose deliver_extra names only the thread, with no chat_id and no home_channel, has somewhere to
 * post. Before, every delivery failed with "no chat to deliver to" and the start warned chat_id missing.
 */
const OPEN = "INSECURE_NO_AUTH";
let discord: FakeApi;
let gw: TestGateway;
beforeAll(async () => {
  discord = await startFakeDiscord("D-TOKEN");
  gw = await startTestGateway({
    config: webhookConfig(
      {
        thread: {
          secret: OPEN,
          prompt: "Build {build.id} failed",
          deliver: "discord",
          deliver_only: true,
          deliver_extra: { thread_id: "{thread}" },
        },
      },
      { rate_limit: 1000 },
      { platforms: { discord: { enabled: true, token: "D-TOKEN", base_url: discord.url } } },
    ),
  });
});
afterAll(async () => {
  await gw.stop();
  await discord.close();
});

describe("discord: deliver_extra.thread_id alone (no chat_id, no home_channel)", () => {
  it("posts to the thread, and the start does not warn that chat_id is missing", async () => {
    const res = await postJson(gw.url("/webhooks/thread"), {
      build: { id: 7 },
      thread: "998877665544332211",
    });
    expect(res).toMatchObject({ status: 200, body: { status: "delivered", target: "discord" } });
    expect(createdMessages(discord)).toEqual([
      expect.objectContaining({ channel_id: "998877665544332211", content: "Build 7 failed" }),
    ]);
    expect(gw.logs().filter((l) => l.msg.includes("knows where to deliver"))).toEqual([]);
  });

  it("an event without the thread still has nowhere to go: refused, never sent elsewhere", async () => {
    const before = createdMessages(discord).length;
    const noChat = () => gw.logs().filter((l) => l.msg.includes("no chat to deliver to")).length;
    const failedBefore = noChat();
    const res = await postJson(gw.url("/webhooks/thread"), { build: { id: 8 } });
    expect(res.status).toBe(502);
    expect(noChat()).toBe(failedBefore + 1);
    expect(createdMessages(discord)).toHaveLength(before);
  });

  it("the refusal says the thread template did not resolve, not only that chat_id is missing", async () => {
    const failures = async (event: object) => {
      const seen = gw.logs().length;
      await postJson(gw.url("/webhooks/thread"), event);
      return gw
        .logs()
        .slice(seen)
        .filter((l) => l.msg.includes("no chat to deliver to"))
        .map((l) => l.msg);
    };
    expect(await failures({ build: { id: 9 } })).toEqual([
      expect.stringContaining(
        'discord: no chat to deliver to — deliver_extra.thread_id of route "thread" did not resolve ("{thread}" is a template the event did not fill: it has no such field); set deliver_extra.chat_id on route "thread" or platforms.discord.home_channel for events without a thread',
      ),
    ]);
    expect(await failures({ build: { id: 10 }, thread: null })).toEqual([
      expect.stringContaining("did not resolve (the event's field is null)"),
    ]);
  });
});
