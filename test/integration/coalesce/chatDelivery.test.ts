import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { coalesceNote } from "../../../src/actors/coalescer.js";
import type { FakeApi } from "../../fakes/httpFake.js";
import { startFakeTelegram } from "../../fakes/telegram.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * Spec 3.1 end to end: coalesced groups reach a chat platform exactly once each, with the latest event's
 * prompt and deliver_extra (its chat), on the quiet window, and at stop (flushed, not dropped).
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

const sends = () =>
  tg.requests
    .filter((r) => r.path.endsWith("/sendMessage"))
    .map((r) => r.json as { chat_id: number; text: string });

async function start(): Promise<TestGateway> {
  gw = await startTestGateway({
    fakeTimers: true,
    config: webhookConfig(
      {
        pr: {
          secret: OPEN,
          prompt: "PR {pr} rev {rev}",
          deliver: "telegram",
          deliver_extra: { chat_id: "{chat}" },
          coalesce: { key: "pr", window_seconds: 30 },
        },
      },
      { rate_limit: 1000 },
      {
        agent: { provider: "echo" },
        platforms: { telegram: { enabled: true, token: "1:abc", base_url: tg.url } },
      },
    ),
  });
  return gw;
}

describe("coalesced runs delivered to a chat platform", () => {
  it("one message per group after the quiet window, with the latest event's text and chat; none later", async () => {
    const g = await start();
    for (let rev = 1; rev <= 3; rev++) {
      const res = await postJson(
        g.url("/webhooks/pr"),
        { pr: 7, rev, chat: String(100 + rev) },
        { "X-Request-ID": `a${rev}` },
      );
      expect(res).toMatchObject({ status: 202, body: { status: "coalesced" } });
      g.clock.advance(10_000);
    }
    await postJson(g.url("/webhooks/pr"), { pr: 8, rev: 1, chat: "200" }, { "X-Request-ID": "b1" });
    g.clock.advance(29_999);
    expect(sends()).toHaveLength(0);
    g.clock.advance(1);
    await vi.waitFor(() => expect(sends()).toHaveLength(2), { timeout: 10_000 });
    expect(sends()).toContainEqual({ chat_id: 103, text: `${coalesceNote(2)}\n\nPR 7 rev 3` });
    expect(sends()).toContainEqual({ chat_id: 200, text: "PR 8 rev 1" });
    g.clock.advance(600_000);
    await new Promise((r) => setTimeout(r, 200));
    expect(sends()).toHaveLength(2);
  });

  it("stop flushes a pending group: its message is delivered before stop resolves, once", async () => {
    const g = await start();
    await postJson(g.url("/webhooks/pr"), { pr: 9, rev: 1, chat: "300" }, { "X-Request-ID": "s1" });
    await postJson(g.url("/webhooks/pr"), { pr: 9, rev: 2, chat: "300" }, { "X-Request-ID": "s2" });
    expect(sends()).toHaveLength(0);
    await g.gateway.stop();
    expect(sends()).toEqual([{ chat_id: 300, text: `${coalesceNote(1)}\n\nPR 9 rev 2` }]);
    g.clock.advance(600_000);
    await new Promise((r) => setTimeout(r, 200));
    expect(sends()).toHaveLength(1);
  });
});
