import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { type FakeClock, fakeClock, gatewayPerTest, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { sample } from "../../helpers/metrics.js";

const OPEN = "INSECURE_NO_AUTH";
const gw = gatewayPerTest();

/** A Telegram API whose sendMessage waits until `release` is called, so the test can step the clock meanwhile. */
let fake: FakeApi;
let release: () => void = () => {};
beforeAll(async () => {
  fake = await startFakeApi(async (request) => {
    if (request.path.endsWith("/getMe")) return { json: { ok: true, result: { id: 42, is_bot: true } } };
    await new Promise<void>((resolve) => {
      release = resolve;
    });
    return { json: { ok: true, result: { message_id: 1, chat: { id: 42 } } } };
  });
});
afterAll(() => fake.close());

/** The wall clock, set back by hand (an NTP step, a VM resumed): nothing else about it is faked. */
function steppedClock(): FakeClock & { stepBack(ms: number): void } {
  let t = Date.now();
  return { ...fakeClock(t), now: () => t, stepBack: (ms) => (t -= ms) };
}

/** A scrape, which must succeed: a failed one is a gap in every series. */
async function scrape(url: string): Promise<string> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  return res.text();
}

describe("durations while the wall clock is set back", { timeout: 30_000 }, () => {
  it("count as no time: the scrape still succeeds, and no counter or histogram _sum goes down (Prometheus would read a reset)", async () => {
    const clock = steppedClock();
    const live = await gw.start({
      clock,
      config: webhookConfig(
        {
          direct: {
            secret: OPEN,
            deliver_only: true,
            deliver: "telegram",
            prompt: "hi",
            deliver_extra: { chat_id: "42" },
          },
          run: { secret: OPEN, deliver: "telegram", deliver_extra: { chat_id: "42" } },
        },
        {},
        { platforms: { telegram: { enabled: true, token: "1:T", base_url: fake.url } } },
      ),
    });
    const sends = () => fake.requests.filter((r) => r.path.endsWith("/sendMessage")).length;
    // A direct delivery is answered once the target took it: the clock goes back 60 s meanwhile.
    const answer = postJson(live.url("/webhooks/direct"), "{}");
    await vi.waitFor(() => expect(sends()).toBe(1), { timeout: 10_000, interval: 20 });
    clock.stepBack(60_000);
    release();
    expect((await answer).status).toBe(200);
    // An agent run's reply is delivered before the run ends: the clock goes back again meanwhile.
    expect((await postJson(live.url("/webhooks/run"), "{}")).status).toBe(202);
    await vi.waitFor(() => expect(sends()).toBe(2), { timeout: 10_000, interval: 20 });
    clock.stepBack(60_000);
    release();
    await vi.waitFor(
      async () =>
        expect(
          sample(await scrape(live.url("/metrics")), 'svc_run_duration_seconds_count{outcome="ok"}'),
        ).toBe(1),
      { timeout: 10_000, interval: 50 },
    );
    const text = await scrape(live.url("/metrics"));
    expect(sample(text, "svc_webhook_request_seconds_total")).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'svc_run_duration_seconds_sum{outcome="ok"}')).toBeGreaterThanOrEqual(0);
    // Counted as taking no time: the first bucket.
    expect(sample(text, 'svc_run_duration_seconds_bucket{le="0.1",outcome="ok"}')).toBe(1);
  });
});
