import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";

/**
 * A scheduled cron run's reply is kept nowhere but in its delivery (a webhook run's is journaled; `svc cron
 * run` prints it): when the target refuses it for good, the `[cron] <job>: run failed` line carries the
 * reply, so the run's work is not lost with the delivery (docs/coalescing-and-cron.md). Real sockets: a Bot API
 * fake that refuses every message, whatever the order of its requests.
 */
let telegram: FakeApi;
let gw: TestGateway;

beforeAll(async () => {
  telegram = await startFakeApi((request) =>
    request.path.endsWith("/getMe")
      ? { json: { ok: true, result: { id: 1, is_bot: true, username: "b" } } }
      : { status: 400, json: { ok: false, error_code: 400, description: "Bad Request: chat not found" } },
  );
  const due = new Date(Date.now() - 1000).toISOString();
  gw = await startTestGateway({
    files: {
      "cron/jobs.json": JSON.stringify({
        revision: 1,
        jobs: {
          j1: {
            id: "j1",
            name: "digest",
            schedule: "every 1d",
            prompt: "the nightly digest text",
            deliver: "telegram",
            deliver_extra: { chat_id: "-42" },
            state: "enabled",
            next_run: due,
            created_at: "2026-11-22T00:00:00.000Z",
          },
        },
      }),
    },
    config: webhookConfig(
      { r: { secret: "s" } },
      {},
      { platforms: { telegram: { enabled: true, token: "1:tg", base_url: telegram.url } } },
    ),
  });
});
afterAll(async () => {
  await gw?.stop();
  await telegram?.close();
});

it("a scheduled run whose reply the target refuses logs the reply with the failure", async () => {
  const failed = await vi.waitFor(
    () => {
      const line = gw.logs().find((l) => l.msg === "[cron] digest: run failed");
      if (line === undefined) throw new Error("no failure yet");
      return line;
    },
    { timeout: 15_000, interval: 50 },
  );
  expect(failed.err).toContain("chat not found");
  // The echo agent's reply is its prompt.
  expect(failed.reply).toBe("the nightly digest text");
});

it("no other line carries a reply", async () => {
  expect(gw.logs().filter((l) => l.reply !== undefined)).toHaveLength(1);
});
