import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { historyDir, readHistory, summarizeHistory } from "../../../src/io/stores/deliveryHistory.js";
import { type FakeModel, startFakeOpenAI } from "../../fakes/openaiServer.js";
import { emailPlatform, type FakeSmtp, startFakeSmtp } from "../../fakes/smtp.js";
import { startGatewayInHome, startTestGateway, stopPastDrain, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { expectMailedRunEnded } from "../../helpers/runEndedAtStop.js";
import { journalLines } from "../../helpers/runJournal.js";

/**
 * docs/delivery-targets.md (email) and docs/agent.md (a run that fails), with state.backend: local: a failed
 * model run's notice is mailed as a reply is. A stop whose drain ends while the notice waits to retry the
 * recipients the server refused for now ends its delivery there, as it ends a reply's: the others got the
 * notice, so the run ended — failed, as it would have without the stop. It is recorded so (run journal, state
 * journal, delivery history, run metric, log), and the next start neither runs it again nor mails the notice
 * to the whole list a second time. A cron job's run likewise: its notice's run failed (`last_run` error), not
 * interrupted — a scheduled one is not caught up at the next start, a fired one not run again.
 */
const OPEN = "INSECURE_NO_AUTH";
const received: string[][] = [];
let server: FakeSmtp;
let model: FakeModel;

beforeAll(async () => {
  server = await startFakeSmtp({
    received,
    refuse: (address) => (address === "busy@example.org" ? { code: 452, text: "Mailbox full" } : undefined),
  });
  model = await startFakeOpenAI();
});
afterAll(async () => {
  await server.close();
  await model.close();
});

describe("state.backend: local — a stop while a failed run's notice waits to retry the recipients refused for now", () => {
  it("ends the run failed, recorded once, and the next start mails no one again", async () => {
    // Every run of it fails (a run again would fail and mail its notice again).
    const refusal = { status: 401, body: JSON.stringify({ error: { message: "key rejected" } }) };
    model.script(refusal, refusal);
    const gw = await startTestGateway({
      fakeSleeps: true,
      // Shorter than the retry's wait (1000 ms): the drain ends while the mail waits, before its retry is made.
      drainTimeoutMs: 500,
      config: webhookConfig(
        { ci: { secret: OPEN, prompt: "build {n}", deliver: "email" } },
        { rate_limit: 1000 },
        {
          agent: { provider: "openai", model: "m", base_url: model.baseUrl, api_key: "k", retries: 0 },
          platforms: {
            email: emailPlatform(server.port, "ops@example.org, busy@example.org"),
          },
        },
      ),
    });
    try {
      const res = await postJson(gw.url("/webhooks/ci"), { n: 7 }, { "X-Request-ID": "notice-stop-1" });
      expect(res.status).toBe(202);
      await vi.waitFor(() => expect(gw.logs().some((l) => l.msg.includes("retry 1/3 in"))).toBe(true), {
        timeout: 10_000,
        interval: 10,
      });
      expect(received).toEqual([["ops@example.org"]]);
      await stopPastDrain(gw);
      expect(received).toEqual([["ops@example.org"]]);
      const messages = gw.logs().map((l) => l.msg);
      expect(messages).toContain(
        '[delivery] email: route "ci": not delivered to busy@example.org (452 Mailbox full); the other recipients got it',
      );
      expect(messages).toContain("[webhook] ci: agent run failed");
      // Nor is it saved for the next start as a run the stop cut short.
      expect(messages.filter((m) => m.includes("not finished at shutdown"))).toEqual([]);
      // Ended failed (the model refused the key; the notice went out): its journal line, history row and run
      // metric say so.
      expect(journalLines(gw.home.dir)).toEqual([
        expect.objectContaining({
          key: "webhook:ci:notice-stop-1",
          run: expect.objectContaining({ outcome: "error", error: expect.stringContaining("HTTP 401") }),
        }),
      ]);
      await expectMailedRunEnded(gw, "notice-stop-1", "failed");
      expect(model.requests).toHaveLength(1);
      expect(received).toEqual([["ops@example.org"]]);
      expect(journalLines(gw.home.dir)).toHaveLength(1);
    } finally {
      gw.home.cleanup();
    }
  });
});

/** Long past: the job runs as the gateway starts. */
const DUE = "2020-01-01T00:00:00.000Z";

/** The cron store of one job mailing its reply, due at `nextRun`. */
const jobs = (nextRun: string) =>
  JSON.stringify({
    revision: 1,
    jobs: {
      j1: {
        id: "j1",
        name: "nightly",
        schedule: "every 1h",
        prompt: "summarise the day",
        deliver: "email",
        deliver_extra: {},
        state: "enabled",
        next_run: nextRun,
        created_at: "2026-11-22T00:00:00.000Z",
      },
    },
  });

const jobOf = (home: string) =>
  (
    JSON.parse(readFileSync(join(home, "cron", "jobs.json"), "utf8")) as {
      jobs: { j1: { next_run: string; last_run?: { status: string; trigger: string; error?: string } } };
    }
  ).jobs.j1;

describe("state.backend: local — a stop while a failed cron run's notice waits to retry the recipients refused for now", () => {
  it("records the scheduled run failed, not interrupted: the next start runs no catch-up", async () => {
    received.length = 0;
    const asked = model.requests.length;
    const refusal = { status: 401, body: JSON.stringify({ error: { message: "key rejected" } }) };
    model.script(refusal, refusal);
    const gw = await startTestGateway({
      fakeSleeps: true,
      drainTimeoutMs: 1000,
      files: { "cron/jobs.json": jobs(DUE) },
      config: webhookConfig(
        {},
        {},
        {
          agent: { provider: "openai", model: "m", base_url: model.baseUrl, api_key: "k", retries: 0 },
          platforms: {
            email: emailPlatform(server.port, "ops@example.org, busy@example.org"),
          },
        },
      ),
    });
    try {
      await vi.waitFor(() => expect(gw.logs().some((l) => l.msg.includes("retry 1/3 in"))).toBe(true), {
        timeout: 10_000,
        interval: 10,
      });
      await stopPastDrain(gw);
      expect(received).toEqual([["ops@example.org"]]);
      const messages = gw.logs().map((l) => l.msg);
      expect(messages).toContain("[cron] nightly: run failed");
      expect(messages.filter((m) => m.includes("interrupted"))).toEqual([]);
      const job = jobOf(gw.home.dir);
      expect(job.last_run).toMatchObject({ status: "error", trigger: "schedule" });
      expect(job.last_run?.error).toContain("HTTP 401");
      expect(job.next_run).not.toBe(DUE);

      const again = await startGatewayInHome(gw.home);
      await again.stop();
      expect(model.requests.length - asked).toBe(1);
      expect(received).toEqual([["ops@example.org"]]);
    } finally {
      gw.home.cleanup();
    }
  });

  it("finishes the run of a job a webhook event fired: the next start does not fire it again", async () => {
    received.length = 0;
    const asked = model.requests.length;
    const refusal = { status: 401, body: JSON.stringify({ error: { message: "key rejected" } }) };
    model.script(refusal, refusal);
    const gw = await startTestGateway({
      fakeSleeps: true,
      drainTimeoutMs: 1000,
      // Not due on its schedule: only the event fires it.
      files: { "cron/jobs.json": jobs("2099-01-01T00:00:00.000Z") },
      config: webhookConfig(
        { fire: { secret: OPEN, cron_job: "nightly" } },
        { rate_limit: 1000 },
        {
          agent: { provider: "openai", model: "m", base_url: model.baseUrl, api_key: "k", retries: 0 },
          platforms: {
            email: emailPlatform(server.port, "ops@example.org, busy@example.org"),
          },
        },
      ),
    });
    try {
      const res = await postJson(gw.url("/webhooks/fire"), {}, { "X-Request-ID": "fire-stop-1" });
      expect(res.status).toBe(202);
      await vi.waitFor(() => expect(gw.logs().some((l) => l.msg.includes("retry 1/3 in"))).toBe(true), {
        timeout: 10_000,
        interval: 10,
      });
      await stopPastDrain(gw);
      expect(received).toEqual([["ops@example.org"]]);
      const messages = gw.logs().map((l) => l.msg);
      expect(messages).toContain("[cron] nightly: run failed");
      expect(messages.filter((m) => m.includes("not finished at shutdown"))).toEqual([]);
      expect(jobOf(gw.home.dir).last_run).toMatchObject({ status: "error" });
      expect(summarizeHistory(readHistory(historyDir(gw.home.dir)))).toEqual([
        expect.objectContaining({
          request: expect.objectContaining({ id: "fire-stop-1", route: "fire", outcome: "accepted" }),
          run: expect.objectContaining({ outcome: "failed" }),
        }),
      ]);

      const again = await startGatewayInHome(gw.home, 300, () => Date.now() + 2 * 3600_000);
      await again.stop();
      expect(gw.logs().filter((l) => l.msg.includes("queued again"))).toEqual([]);
      expect(model.requests.length - asked).toBe(1);
      expect(received).toEqual([["ops@example.org"]]);
    } finally {
      gw.home.cleanup();
    }
  });
});
