import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { FakeApi } from "../../fakes/httpFake.js";
import { sentTexts, startFakeTelegram } from "../../fakes/telegram.js";
import {
  RECORDER_AGENT,
  recorderAgent,
  startTestGateway,
  type TestGateway,
  waitForRun,
  webhookConfig,
} from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * A Node.js timer holds at most 2^31 - 1 ms (~24.8 days); a longer delay fires after 1 ms. Timeouts
 * written as "practically never" (30+ days) must not time every script, run and delivery out at once.
 */
const OPEN = "INSECURE_NO_AUTH";
const NEVER = 3_000_000; // seconds, ~35 days
let tg: FakeApi;
let gw: TestGateway;
beforeAll(async () => {
  tg = await startFakeTelegram();
  gw = await startTestGateway({
    files: {
      "agent/recorder.sh": RECORDER_AGENT,
      "scripts/slowish.sh": 'cat >/dev/null\nsleep 0.2\necho \'{"title": "from the script"}\'\n',
    },
    config: webhookConfig(
      {
        scripted: { secret: OPEN, script: "slowish.sh", prompt: "{title}" },
        chat: { secret: OPEN, prompt: "note {n}", deliver: "telegram", deliver_extra: { chat_id: "-1001" } },
      },
      { script_timeout_seconds: NEVER, rate_limit: 1000 },
      {
        agent: { ...recorderAgent(), timeout_seconds: NEVER },
        platforms: { telegram: { enabled: true, token: "1:abc", base_url: tg.url, timeout_seconds: NEVER } },
      },
    ),
  });
});
afterAll(async () => {
  await gw.stop();
  await tg.close();
});

describe("timeouts longer than a timer holds count as the longest one (~24.8 days)", () => {
  it("script_timeout_seconds and agent.timeout_seconds of 35 days: the script's output reaches the agent run", async () => {
    const res = await postJson(gw.url("/webhooks/scripted"), { title: "original" });
    expect(res).toMatchObject({ status: 202, body: { status: "accepted" } });
    expect((await waitForRun(gw, res.body.delivery_id as string)).prompt).toBe("from the script");
    expect(
      gw
        .logs()
        .map((l) => l.msg)
        .join("\n"),
    ).not.toMatch(/timed out/i);
  });

  it("platforms.<name>.timeout_seconds of 35 days: the reply is delivered", async () => {
    const res = await postJson(gw.url("/webhooks/chat"), { n: 7 });
    expect(res.status).toBe(202);
    await vi.waitFor(() => expect(sentTexts(tg)).toContain("reply to " + res.body.delivery_id), {
      timeout: 10_000,
      interval: 50,
    });
  });
});
