import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { FakeApi } from "../../fakes/httpFake.js";
import { sentTexts, startFakeTelegram } from "../../fakes/telegram.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * Retry-After (RFC 9110 section 10.2.3) is sent with 503 (maintenance, overload) as well as with 429;
 * an agent-mode delivery waits what the platform asked for, not its own shorter backoff.
 */
const OPEN = "INSECURE_NO_AUTH";
let tg: FakeApi;
let gw: TestGateway;
beforeAll(async () => {
  tg = await startFakeTelegram();
  gw = await startTestGateway({
    // The retry's wait runs on the test's clock: it ends when the test moves the clock, never by itself.
    fakeSleeps: true,
    config: webhookConfig(
      { ci: { secret: OPEN, prompt: "build {n}", deliver: "telegram", deliver_extra: { chat_id: "-1001" } } },
      { rate_limit: 1000 },
      {
        agent: { provider: "echo" },
        platforms: { telegram: { enabled: true, token: "1:abc", base_url: tg.url } },
      },
    ),
  });
});
afterAll(async () => {
  await gw.stop();
  await tg.close();
});

const sendTimes = () => tg.requests.filter((r) => r.path.endsWith("/sendMessage"));

describe("Retry-After on a 503 (agent mode)", () => {
  it("waits the Retry-After seconds of a 503 before the retry, then delivers once", async () => {
    const at: number[] = [];
    tg.setHandler((request) => {
      // Only sendMessage fails: the gateway's getMe credentials check may still be on its way (a 503 to it
      // would leave the delivery nothing to retry).
      if (!request.path.endsWith("/sendMessage")) {
        return { json: { ok: true, result: { id: 42, is_bot: true, username: "svc_test_bot" } } };
      }
      at.push(gw.clock.now());
      return at.length === 1
        ? { status: 503, headers: { "retry-after": "2" }, text: "Service Unavailable" }
        : { json: { ok: true, result: { message_id: at.length } } };
    });
    const res = await postJson(gw.url("/webhooks/ci"), { n: 5 }, { "X-Request-ID": "ra-1" });
    expect(res).toMatchObject({ status: 202, body: { status: "accepted" } });
    // Move the clock 100 ms at a time until the retry is sent: it comes no sooner than 2000 ms of the
    // gateway's time after the 503 (a shorter backoff of its own would send it earlier).
    await vi.waitFor(
      () => {
        if (sendTimes().length === 1) gw.clock.advance(100);
        expect(sendTimes()).toHaveLength(2);
      },
      { timeout: 15_000, interval: 10 },
    );
    expect((at[1] as number) - (at[0] as number)).toBeGreaterThanOrEqual(2000);
    expect(sentTexts(tg)).toEqual(["build 5", "build 5"]);
    expect(gw.logs().map((l) => l.msg)).toContainEqual(
      expect.stringMatching(/telegram: sendMessage: HTTP 503 .* retry 1\/3 in 2000 ms/),
    );
  });
});
