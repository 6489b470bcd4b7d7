import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { historyDir, readHistory, summarizeHistory } from "../../../src/io/stores/deliveryHistory.js";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { type FakeModel, startFakeOpenAI } from "../../fakes/openaiServer.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * A cron run whose model run fails sends its target the failure notice; when the target refuses that notice
 * too, the run still failed as the model did (docs/agent.md, "A run that fails"): the `[cron] <job>: run
 * failed` line (with the notice's delivery ID), `last_run.error` and the fired run's RUN in the delivery
 * history give the model's reason, and the refusal is the delivery's failure, as for a webhook route's run.
 * Real sockets: a Chat Completions fake answering 401 and a Bot API fake refusing every message. The log is
 * at WARN, where the `run failed` line is the only one left to say why the model failed.
 */
let model: FakeModel;
let telegram: FakeApi;
let gw: TestGateway;

const job = (id: string, name: string, nextRun: string) => ({
  id,
  name,
  schedule: "every 1d",
  prompt: `${name} prompt`,
  deliver: "telegram",
  deliver_extra: { chat_id: "-42" },
  state: "enabled",
  next_run: nextRun,
  created_at: "2026-11-22T00:00:00.000Z",
});

const lastRun = (id: string) =>
  (
    JSON.parse(readFileSync(join(gw.home.dir, "cron", "jobs.json"), "utf8")) as {
      jobs: Record<string, { last_run?: { status: string; trigger: string; error?: string } }>;
    }
  ).jobs[id]?.last_run;

const failedLine = (name: string) => gw.logs().find((l) => l.msg === `[cron] ${name}: run failed`);

const MODEL_REASON = /answered HTTP 401.*check agent\.api_key/;

beforeAll(async () => {
  [model, telegram] = await Promise.all([
    startFakeOpenAI(),
    startFakeApi((request) =>
      request.path.endsWith("/getMe")
        ? { json: { ok: true, result: { id: 1, is_bot: true, username: "b" } } }
        : { status: 400, json: { ok: false, error_code: 400, description: "Bad Request: chat not found" } },
    ),
  ]);
  // One refusal for the scheduled run, one for the fired one.
  const refused = { status: 401, body: JSON.stringify({ error: { message: "Incorrect API key provided" } }) };
  model.script(refused, refused);
  gw = await startTestGateway({
    logLevel: "warn",
    files: {
      "cron/jobs.json": JSON.stringify({
        revision: 1,
        jobs: {
          // Due since long ago: run at the scheduler's first check.
          j1: job("j1", "digest", "2020-01-01T00:00:00.000Z"),
          j2: job("j2", "nightly", "2099-01-01T00:00:00.000Z"),
        },
      }),
    },
    config: webhookConfig(
      { fire: { secret: "INSECURE_NO_AUTH", cron_job: "nightly" } },
      {},
      {
        agent: { provider: "openai", model: "m", base_url: model.baseUrl, api_key: "sk-test", retries: 0 },
        platforms: { telegram: { enabled: true, token: "1:tg", base_url: telegram.url } },
      },
    ),
  });
});
afterAll(async () => {
  await gw?.stop();
  await Promise.all([model?.close(), telegram?.close()]);
});

describe("a cron run that fails, whose failure notice the target refuses", { timeout: 30_000 }, () => {
  it("scheduled: fails with the model's reason, the notice's refusal logged as its delivery's", async () => {
    const failed = await vi.waitFor(
      () => {
        const line = failedLine("digest");
        if (line === undefined) throw new Error("no failure yet");
        return line;
      },
      { timeout: 15_000, interval: 50 },
    );
    expect(failed.err).toMatch(MODEL_REASON);
    expect(failed.err).not.toContain("chat not found");
    expect(failed.delivery_id).toMatch(/^cron-j1-/);
    // A notice is no reply: none kept.
    expect(failed.reply).toBeUndefined();
    const refusal = gw
      .logs()
      .find((l) => l.msg.startsWith("[delivery] telegram failed for route cron:digest"));
    expect(refusal?.msg).toContain("chat not found");
    expect(refusal?.delivery_id).toBe(failed.delivery_id);
    await vi.waitFor(() => expect(lastRun("j1")?.status).toBe("error"), { timeout: 5000, interval: 20 });
    expect(lastRun("j1")?.error).toMatch(MODEL_REASON);
    expect(lastRun("j1")?.error).not.toContain("chat not found");
  });

  it("fired by a cron_job route: RUN failed with the model's reason, DELIVERY failed with the platform's", async () => {
    const answer = await postJson(gw.url("/webhooks/fire"), {}, { "X-Request-ID": "ev-1" });
    expect(answer.status).toBe(202);
    const failed = await vi.waitFor(
      () => {
        const line = failedLine("nightly");
        if (line === undefined) throw new Error("no failure yet");
        return line;
      },
      { timeout: 15_000, interval: 50 },
    );
    expect(failed.err).toMatch(MODEL_REASON);
    expect(failed.err).not.toContain("chat not found");
    // The notice named the event's delivery, under which the history lists the run.
    expect(failed.delivery_id).toBe("ev-1");
    const notices = telegram.requests.filter((r) => r.path.endsWith("/sendMessage"));
    expect(notices.map((r) => (r.json as { text?: string }).text)).toEqual([
      expect.stringContaining("Agent run failed"),
      expect.stringContaining("Agent run failed"),
    ]);
    await gw.gateway.stop(); // writes the history out
    const row = summarizeHistory(readHistory(historyDir(gw.home.dir))).find((r) => r.request?.id === "ev-1");
    expect(row).toMatchObject({
      run: { outcome: "failed", error: expect.stringMatching(MODEL_REASON) },
      delivery: { platform: "telegram", outcome: "failed", error: expect.stringContaining("chat not found") },
    });
    expect(row?.run?.error).not.toContain("chat not found");
    expect(lastRun("j2")?.error).toMatch(MODEL_REASON);
  });
});
