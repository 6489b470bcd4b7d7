import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { SessionStore } from "../../../src/io/sessions/store.js";
import type { FakeApi } from "../../fakes/httpFake.js";
import { startFakeTelegram } from "../../fakes/telegram.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * mirror_to_session on a cron_job route (spec 2.2: after a successful chat delivery, the delivered text
 * goes into that chat's session): the fired job's reply, delivered to the job's chat, is mirrored under
 * the route's name. The same job run on its schedule (no route) is not.
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

const job = (id: string, name: string, nextRun: string) => ({
  id,
  name,
  schedule: "every 1d",
  prompt: `${name} prompt`,
  deliver: "telegram",
  deliver_extra: { chat_id: "9" },
  state: "enabled",
  next_run: nextRun,
  created_at: "2026-11-22T00:00:00.000Z",
});

const sends = () => tg.requests.filter((r) => r.path.endsWith("/sendMessage"));

describe("mirror_to_session on a cron_job route", () => {
  it("the fired job's reply delivered to a chat with a session is appended as [Webhook delivery: <route>]", async () => {
    gw = await startTestGateway({
      files: {
        "cron/jobs.json": JSON.stringify({
          revision: 1,
          jobs: { aaaa0001: job("aaaa0001", "nightly", "2099-01-01T00:00:00.000Z") },
        }),
      },
      config: webhookConfig(
        {
          fire: { secret: OPEN, cron_job: "nightly", mirror_to_session: true, prompt: "event {n}" },
          quiet: { secret: OPEN, cron_job: "nightly", prompt: "event {n}" },
        },
        { rate_limit: 1000 },
        {
          agent: { provider: "echo" },
          platforms: { telegram: { enabled: true, token: "1:abc", base_url: tg.url } },
        },
      ),
    });
    const store = SessionStore.forProfile(gw.home.dir, undefined);
    await store.openChat("telegram", "9");
    const res = await postJson(gw.url("/webhooks/fire"), { n: 1 }, { "X-Request-ID": "f1" });
    expect(res.status).toBe(202);
    await vi.waitFor(() => expect(store.entries("telegram:9")).toHaveLength(1), { timeout: 5000 });
    const [entry] = store.entries("telegram:9");
    expect(entry?.content).toMatch(
      /^\[Webhook delivery: fire\]\nnightly prompt\n\n\[Webhook event: route fire/,
    );
    expect(entry?.content).toContain("event 1");

    // A route without mirror_to_session firing the same job: delivered, not mirrored.
    await postJson(gw.url("/webhooks/quiet"), { n: 2 }, { "X-Request-ID": "q1" });
    await vi.waitFor(() => expect(sends()).toHaveLength(2), { timeout: 5000 });
    await gw.gateway.stop();
    expect(store.entries("telegram:9")).toHaveLength(1);
  });
});
