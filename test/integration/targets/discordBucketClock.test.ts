import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { sleepOn } from "../../../src/clock.js";
import { configSchema } from "../../../src/config/schema.js";
import { createTargets } from "../../../src/io/targets/registry.js";
import type { DeliveryTarget } from "../../../src/io/targets/target.js";
import { sentContents, startFakeDiscord } from "../../fakes/discord.js";
import type { FakeApi } from "../../fakes/httpFake.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { directNoteConfig, type FakeClock, fakeClock, startTestGateway } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { message } from "./support.js";

/**
 * docs/delivery-targets.md, Discord: when an answer says the channel's bucket is empty, the next part waits
 * `X-RateLimit-Reset-After` (up to 10 s). The reset's time and the wait are on the gateway's clock (here a
 * fake one the test moves, which the Discord fake's windows run on too), and the gateway's stop ends the wait.
 */
const WINDOW_MS = 4000;
let clock: FakeClock;
let discord: FakeApi;

beforeAll(async () => {
  discord = await startFakeDiscord("D", {
    bucket: { limit: 2, windowMs: WINDOW_MS, now: () => clock.elapsed() },
  });
});
afterAll(() => discord.close());
beforeEach(() => {
  clock = fakeClock(0);
});

const posts = (channel: string) =>
  discord.requests.filter((r) => r.method === "POST" && r.path === `/api/v10/channels/${channel}/messages`);
const waitTimer = () =>
  vi.waitFor(() => expect(clock.pendingTimers()).toBeGreaterThan(0), { timeout: 5000, interval: 5 });

function discordTarget(): DeliveryTarget {
  const config = configSchema.parse({
    platforms: { discord: { enabled: true, token: "D", base_url: discord.url } },
  });
  const target = createTargets(config, {
    logger: captureLogger().logger,
    sleep: sleepOn(clock),
    elapsed: clock.elapsed,
  }).get("discord");
  if (target === undefined) throw new Error("discord not built");
  return target;
}

/** A text of `parts` parts of 1990 characters each. */
const long = (parts: number) => Array.from({ length: parts }, (_, i) => `${i}`.repeat(1990)).join("\n");

describe("discord: the wait for an empty rate-limit bucket", () => {
  it("lasts until the reset on the gateway's clock, then the rest is posted", async () => {
    const text = long(3);
    const sending = discordTarget().send(message(text, { chat_id: "701" }));
    await waitTimer();
    expect(posts("701")).toHaveLength(2);
    clock.advance(WINDOW_MS - 1);
    expect(clock.pendingTimers()).toBe(1);
    expect(posts("701")).toHaveLength(2);
    clock.advance(1);
    expect((await sending).parts).toBe(3);
    expect(posts("701")).toHaveLength(3);
    expect(
      sentContents(discord)
        .filter((c) => text.includes(c))
        .join(""),
    ).toBe(text);
  });

  it("ends at once when the gateway stops, and the parts left are not sent", async () => {
    const stop = new AbortController();
    const sending = discordTarget().send(message(long(3), { chat_id: "702" }), stop.signal);
    await waitTimer();
    stop.abort(new Error("the gateway stops"));
    await expect(sending).rejects.toThrow("the gateway stops");
    expect(clock.pendingTimers()).toBe(0);
    expect(posts("702")).toHaveLength(2);
  });

  it("of a direct delivery ends when the gateway stops: nothing more is sent and the sender is answered 503", async () => {
    const gw = await startTestGateway({
      clock,
      fakeSleeps: true,
      config: directNoteConfig("discord", { chat_id: "704" }, { token: "D", base_url: discord.url }),
    });
    try {
      const answer = postJson(gw.url("/webhooks/note"), { text: long(3) });
      await waitTimer();
      expect(posts("704")).toHaveLength(2);
      let stopped = false;
      const stopping = gw.gateway.stop().then(() => {
        stopped = true;
      });
      // The stop ended the wait: neither it nor the delivery waited for the clock, which never moved.
      await vi.waitFor(() => expect(stopped).toBe(true), { timeout: 5000, interval: 5 });
      await stopping;
      const cut = await answer;
      expect(cut.status).toBe(503);
      expect(cut.headers.get("retry-after")).toBe("30");
      expect(clock.elapsed()).toBe(0);
      expect(posts("704")).toHaveLength(2);
      const lines = gw.logs();
      expect(lines.map((l) => l.msg)).toContain(
        "[delivery] discord: route note: not delivered — the gateway stopped while the delivery was under way (not counted as failed)",
      );
      expect(lines.filter((l) => l.msg.includes("direct delivery to discord failed"))).toEqual([]);
    } finally {
      clock.advance(10_000);
      await gw.stop();
    }
  });

  it("is not waited once the reset has passed on the clock the gateway is given", async () => {
    const gw = await startTestGateway({
      clock,
      fakeSleeps: true,
      config: directNoteConfig("discord", { chat_id: "703" }, { token: "D", base_url: discord.url }),
    });
    try {
      // Two parts empty the bucket; once its window has passed on the gateway's clock, the next goes at once.
      expect((await postJson(gw.url("/webhooks/note"), { text: long(2) })).status).toBe(200);
      expect(posts("703")).toHaveLength(2);
      clock.advance(WINDOW_MS);
      expect((await postJson(gw.url("/webhooks/note"), { text: "after the reset" })).status).toBe(200);
      expect(posts("703")).toHaveLength(3);
    } finally {
      await gw.stop();
    }
  });
});
