import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { FakeApi } from "../../fakes/httpFake.js";
import { startFakeTelegram } from "../../fakes/telegram.js";
import {
  RECORDER_AGENT,
  recorderAgent,
  startTestGateway,
  type TestGateway,
  webhookConfig,
} from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * A cron job's `deliver_extra` is sent as written: a job has no payload, so a value in braces is the value
 * itself, never a template the event did not fill. A scheduled run and a run a webhook event fired refused
 * `chat_id: "{team}"` ("is a template the event did not fill … the message is not sent") and left
 * `message_thread_id: "{pull_request.number}"` out of the message, as for a route's unfilled placeholder.
 */
let telegram: FakeApi;
let gw: TestGateway;

/** A job delivering to Telegram with `extra`, due at the gateway's first check (`next_run` passed) or never. */
const job = (id: string, extra: Record<string, string>, due: boolean) => ({
  id,
  name: id,
  schedule: "every 1d",
  prompt: `prompt of ${id}`,
  deliver: "telegram",
  deliver_extra: extra,
  state: "enabled",
  next_run: due ? new Date(Date.now() - 1000).toISOString() : "2099-01-01T00:00:00.000Z",
  created_at: "2026-11-22T00:00:00.000Z",
});

beforeAll(async () => {
  telegram = await startFakeTelegram();
  gw = await startTestGateway({
    config: webhookConfig(
      { fire: { secret: "INSECURE_NO_AUTH", cron_job: "fired" } },
      {},
      {
        agent: recorderAgent(),
        platforms: { telegram: { enabled: true, token: "1:T", base_url: telegram.url } },
      },
    ),
    files: {
      "agent/recorder.sh": RECORDER_AGENT,
      "cron/jobs.json": JSON.stringify({
        revision: 1,
        jobs: {
          team: job("team", { chat_id: "{team}" }, true),
          thread: job("thread", { chat_id: "-100", message_thread_id: "{pull_request.number}" }, true),
          fired: job("fired", { chat_id: "{ops}", message_thread_id: "{topic}" }, false),
        },
      }),
    },
  });
});
afterAll(async () => {
  await gw?.stop();
  await telegram?.close();
});

/** The sendMessage requests the fake received for job `id`'s runs (the recorder replies `reply to <id>`). */
const sentFor = (id: string) =>
  telegram.requests
    .filter((r) => r.path.endsWith("/sendMessage"))
    .map((r) => r.json as Record<string, unknown>)
    .filter((body) => String(body.text).startsWith(`reply to cron-${id}-`));

describe("a cron job's deliver_extra value in braces", () => {
  it("is the chat and the thread a scheduled run delivers to, as written", async () => {
    await vi.waitFor(
      () => {
        expect(sentFor("team")).toHaveLength(1);
        expect(sentFor("thread")).toHaveLength(1);
      },
      { timeout: 20_000, interval: 50 },
    );
    expect(sentFor("team")[0]).toMatchObject({ chat_id: "{team}" });
    expect(sentFor("thread")[0]).toMatchObject({ chat_id: -100, message_thread_id: "{pull_request.number}" });
    expect(gw.logs().filter((l) => l.msg.includes("did not resolve"))).toEqual([]);
  });

  it("is the chat and the thread of a run a webhook event fired, whatever the event holds", async () => {
    const answer = await postJson(gw.url("/webhooks/fire"), { ops: "other", topic: 7 });
    expect(answer.status).toBe(202);
    await vi.waitFor(() => expect(sentFor("fired")).toHaveLength(1), { timeout: 20_000, interval: 50 });
    expect(sentFor("fired")[0]).toMatchObject({ chat_id: "{ops}", message_thread_id: "{topic}" });
  });
});
