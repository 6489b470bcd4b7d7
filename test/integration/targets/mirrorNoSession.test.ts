import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { SessionStore } from "../../../src/io/sessions/store.js";
import type { FakeApi } from "../../fakes/httpFake.js";
import { startFakeTelegram } from "../../fakes/telegram.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * Spec 4.4 mirror_to_session through the gateway, on a multiplexed profile route with deliver_only: the
 * text goes only to that profile's session of the chat; a chat with no session there is skipped and
 * nothing is created (not even the profile's sessions directory).
 */
const OPEN = "INSECURE_NO_AUTH";
let tg: FakeApi;
let gw: TestGateway | undefined;
beforeEach(async () => {
  tg = await startFakeTelegram();
});
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
  await tg.close();
});

async function start(): Promise<TestGateway> {
  gw = await startTestGateway({
    config: webhookConfig(
      {
        d: {
          secret: OPEN,
          profile: "work",
          prompt: "hello {n}",
          deliver: "telegram",
          deliver_only: true,
          mirror_to_session: true,
          deliver_extra: { chat_id: "{chat}" },
        },
      },
      { rate_limit: 1000 },
      {
        gateway: { multiplex_profiles: true },
        platforms: { telegram: { enabled: true, token: "1:abc", base_url: tg.url } },
      },
    ),
  });
  return gw;
}

describe("mirror_to_session on a profile-prefixed deliver_only route", () => {
  it("a chat without a session in that profile: 200 delivered, nothing created, the default profile's session untouched", async () => {
    const g = await start();
    const personal = SessionStore.forProfile(g.home.dir, undefined);
    await personal.openChat("telegram", "9");
    const res = await postJson(g.url("/p/work/webhooks/d"), { n: 1, chat: "9" }, { "X-Request-ID": "m1" });
    expect(res).toMatchObject({
      status: 200,
      body: { status: "delivered", route: "d", target: "telegram", delivery_id: "m1" },
    });
    // The mirror, made after the answer, finds no session: said at DEBUG, and nothing is created.
    await vi.waitFor(
      () => expect(g.logs().some((l) => l.msg.includes("telegram chat 9 has no session"))).toBe(true),
      { timeout: 5000, interval: 10 },
    );
    expect(existsSync(join(g.home.dir, "profiles", "work", "sessions"))).toBe(false);
    expect(personal.entries("telegram:9")).toEqual([]);
  });

  it("a chat with a session in that profile gets [Webhook delivery: <route>] and the message", async () => {
    const g = await start();
    const work = SessionStore.forProfile(g.home.dir, "work");
    await work.openChat("telegram", "9");
    const res = await postJson(g.url("/p/work/webhooks/d"), { n: 2, chat: "9" }, { "X-Request-ID": "m2" });
    expect(res.status).toBe(200);
    // A direct delivery is answered without waiting for its mirror (docs/delivery-targets.md).
    await vi.waitFor(
      () =>
        expect(work.entries("telegram:9").map((e) => e.content)).toEqual(["[Webhook delivery: d]\nhello 2"]),
      { timeout: 5000, interval: 10 },
    );
  });
});
