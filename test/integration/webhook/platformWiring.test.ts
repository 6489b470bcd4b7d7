import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { findRunSession } from "../../../src/io/sessions/runJournal.js";
import { createFakeGh, type FakeGh } from "../../fakes/fakeGh.js";
import type { FakeApi } from "../../fakes/httpFake.js";
import { startFakeOpenAI } from "../../fakes/openaiServer.js";
import { startFakeTelegram } from "../../fakes/telegram.js";
import { oneJobStore } from "../../helpers/cronJobs.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

let gw: TestGateway | undefined;
let telegram: FakeApi | undefined;
let gh: FakeGh | undefined;
afterEach(async () => {
  gh?.cleanup();
  gh = undefined;
  await gw?.stop();
  await telegram?.close();
  gw = undefined;
  telegram = undefined;
});

const insecure = { secret: "INSECURE_NO_AUTH" };

describe("delivery platforms in the gateway (spec 4.4)", () => {
  it("refuses to start when a route delivers to a platform that is not enabled, naming the route and the fix", async () => {
    await expect(
      startTestGateway({
        config: webhookConfig({
          alerts: { ...insecure, deliver: "chat_1", deliver_only: true, prompt: "alert {id}" },
        }),
      }),
    ).rejects.toThrow(
      /routes\.alerts\.deliver: chat_1 needs platforms\.telegram enabled — set platforms\.telegram\.enabled: true/,
    );
  });

  it("delivers forge_comment through gh on PATH with no platforms section (spec 4.4 needs only the client)", async () => {
    gh = createFakeGh();
    gw = await startTestGateway({
      env: { PATH: gh.path },
      config: webhookConfig({
        pr: {
          ...insecure,
          deliver: "forge_comment",
          deliver_only: true,
          prompt: "Thanks for #{number}",
          deliver_extra: { repo: "octo/hello", pr_number: "{number}" },
        },
      }),
    });
    const answer = await postJson(gw.url("/webhooks/pr"), { number: 5 }, { "x-request-id": "pr-5" });
    expect(answer).toMatchObject({
      status: 200,
      body: { status: "delivered", route: "pr", target: "forge_comment" },
    });
    expect(gh.calls()).toEqual([
      { argv: ["pr", "comment", "5", "--repo", "octo/hello", "--body-file", "-"], stdin: "Thanks for #5" },
    ]);
    // gh on the gateway's PATH: nothing warned.
    expect(gw.logs().some((l) => String(l.msg).includes("forge_comment.command"))).toBe(false);
  });

  it("forge_comment without gh on the gateway's PATH: the start warns, as svc config check does, before the first comment fails", async () => {
    gw = await startTestGateway({
      env: { PATH: "/nonexistent-svc-test-bin" },
      config: webhookConfig({
        pr: {
          ...insecure,
          deliver: "forge_comment",
          deliver_extra: { repo: "octo/hello", pr_number: "{number}" },
        },
      }),
    });
    const warned = gw.logs().filter((l) => String(l.msg).includes('"gh" was not found on PATH'));
    expect(warned.map((l) => [l.level, l.msg])).toEqual([
      [
        40,
        `[delivery] ${gw.home.dir}/config.yaml: platforms.forge_comment.command: "gh" was not found on PATH — route pr delivers to forge_comment, and every pull-request comment fails until it can be started: install the GitHub CLI and run "gh auth login", or set platforms.forge_comment.command to where gh is`,
      ],
    ]);
  });

  it("forge_comment: a host the payload fills into a templated repo runs no gh (502), in direct and agent mode", async () => {
    gh = createFakeGh();
    const route = {
      ...insecure,
      deliver: "forge_comment",
      prompt: "Thanks for #{number}",
      deliver_extra: { repo: "{repository.full_name}", pr_number: "{number}" },
    };
    gw = await startTestGateway({
      env: { PATH: gh.path, GH_ENTERPRISE_TOKEN: "ghp_enterpriseTOKENforTHEhost0123" },
      config: webhookConfig({ direct: { ...route, deliver_only: true }, agent: route }),
    });
    const payload = { number: 5, repository: { full_name: "collector.example.net/octo/hello" } };
    const answer = await postJson(gw.url("/webhooks/direct"), payload, { "x-request-id": "fc-direct" });
    expect(answer).toMatchObject({ status: 502, body: { error: "Delivery failed" } });
    const accepted = await postJson(gw.url("/webhooks/agent"), payload, { "x-request-id": "fc-agent" });
    expect(accepted.status).toBe(202);
    const refusal = 'deliver_extra.repo names the host "collector.example.net", which the event filled in';
    const messages = () => (gw?.logs() ?? []).map((line) => line.msg).join("\n");
    await vi.waitFor(() => expect(messages()).toContain(`route "agent": ${refusal}`), { timeout: 20_000 });
    expect(messages()).toContain(`route "direct": ${refusal}`);
    expect(gh.calls()).toEqual([]);
  }, 60_000);

  it("forge_comment: a model run that failed comments that it failed and where the reason is, not the reason (an internal endpoint, its answer)", async () => {
    gh = createFakeGh();
    const model = await startFakeOpenAI();
    try {
      model.script({
        status: 401,
        body: JSON.stringify({ error: { message: "key rejected for org acme-internal" } }),
      });
      gw = await startTestGateway({
        env: { PATH: gh.path },
        config: webhookConfig(
          {
            pr: {
              ...insecure,
              deliver: "forge_comment",
              prompt: "Review #{number}",
              deliver_extra: { repo: "octo/hello", pr_number: "{number}" },
            },
          },
          {},
          { agent: { provider: "openai", model: "m", base_url: model.baseUrl, api_key: "k", retries: 0 } },
        ),
      });
      const accepted = await postJson(gw.url("/webhooks/pr"), { number: 9 }, { "x-request-id": "fc-fail" });
      expect(accepted.status).toBe(202);
      await vi.waitFor(() => expect(gh?.calls()).toHaveLength(1), { timeout: 20_000 });
      expect(gh.calls()).toEqual([
        {
          argv: ["pr", "comment", "9", "--repo", "octo/hello", "--body-file", "-"],
          stdin: "⚠️ Agent run failed — the gateway's log says why (delivery fc-fail)",
        },
      ]);
      // The reason is in the log, under the delivery ID the comment names (its line follows the delivery).
      const failed = () => gw?.logs().find((line) => line.msg === "[webhook] pr: agent run failed");
      await vi.waitFor(() => expect(failed()).toBeDefined(), { timeout: 20_000 });
      expect(JSON.stringify(failed())).toContain("fc-fail");
      expect(JSON.stringify(gw.logs())).toContain("acme-internal");
    } finally {
      await model.close();
    }
  }, 60_000);

  it("forge_comment: a fired cron job whose model run failed comments the event's delivery ID, and its `run failed` line carries it", async () => {
    gh = createFakeGh();
    const model = await startFakeOpenAI();
    try {
      model.script({
        status: 401,
        body: JSON.stringify({ error: { message: "key rejected for org acme-internal" } }),
      });
      gw = await startTestGateway({
        env: { PATH: gh.path },
        files: {
          "cron/jobs.json": oneJobStore({
            name: "review",
            prompt: "Review",
            next_run: "2099-01-01T00:00:00.000Z",
            deliver: "forge_comment",
            deliver_extra: { repo: "octo/hello", pr_number: "9" },
          }),
        },
        config: webhookConfig(
          { fire: { ...insecure, cron_job: "review" } },
          {},
          { agent: { provider: "openai", model: "m", base_url: model.baseUrl, api_key: "k", retries: 0 } },
        ),
      });
      const accepted = await postJson(gw.url("/webhooks/fire"), { number: 9 }, { "x-request-id": "fc-cron" });
      expect(accepted.status).toBe(202);
      await vi.waitFor(() => expect(gh?.calls()).toHaveLength(1), { timeout: 20_000 });
      expect(gh.calls()[0]?.stdin).toBe("⚠️ Agent run failed — the gateway's log says why (delivery fc-cron)");
      const failed = () => gw?.logs().find((line) => line.msg === "[cron] review: run failed");
      await vi.waitFor(() => expect(failed()).toBeDefined(), { timeout: 20_000 });
      expect(failed()).toMatchObject({
        delivery_id: "fc-cron",
        err: expect.stringContaining("acme-internal"),
      });
    } finally {
      await model.close();
    }
  }, 60_000);

  it("refuses an unknown delivery target by name", async () => {
    await expect(
      startTestGateway({ config: webhookConfig({ alerts: { ...insecure, deliver: "carrier_pigeon" } }) }),
    ).rejects.toThrow(/carrier_pigeon/);
  });

  it("checks each enabled platform's credentials at startup and logs its state", async () => {
    telegram = await startFakeTelegram();
    gw = await startTestGateway({
      config: webhookConfig(
        { alerts: { ...insecure, deliver: "telegram", deliver_extra: { chat_id: "7" } } },
        {},
        { platforms: { telegram: { enabled: true, token: "123:abc", base_url: telegram.url } } },
      ),
    });
    const running = gw;
    await vi.waitFor(
      () =>
        expect(running.logs().map((l) => l.msg)).toContainEqual(
          expect.stringMatching(/telegram: connected as/),
        ),
      { timeout: 10_000 },
    );
    expect(telegram.requests.some((r) => r.path.endsWith("/getMe"))).toBe(true);
    expect(JSON.stringify(running.logs())).not.toContain("123:abc");
  });
});

describe("agent-run sessions", () => {
  it("records each webhook run as its own session webhook:<route>:<delivery_id>", async () => {
    gw = await startTestGateway({ config: webhookConfig({ gh: { ...insecure, prompt: "PR {number}" } }) });
    const answer = await postJson(gw.url("/webhooks/gh"), { number: 12 }, { "x-request-id": "run-1" });
    expect(answer.status).toBe(202);
    const sessions = join(gw.home.dir, "sessions");
    // The journal is flushed when the gateway stops.
    const running = gw;
    await vi.waitFor(
      () => expect(running.logs().map((l) => l.msg)).toContainEqual(expect.stringContaining("PR 12")),
      { timeout: 10_000 },
    );
    await running.gateway.stop();
    const session = findRunSession(sessions, "webhook:gh:run-1");
    expect(session?.entries.map((e) => e.content)).toEqual(["PR 12", "PR 12"]);
  });
});
