import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { signGenericV2 } from "../../../src/cli/webhook.js";
import { gatewayPerTest, RECORDER_AGENT, recorderAgent, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { svc } from "../cli/svc.js";

/** Spec 3.2 through the CLI: a subscription firing a paused cron job drops its events until the job resumes. */

const perTest = gatewayPerTest();
const live = perTest.live;
const send = (secret: string, id: string) => {
  const body = JSON.stringify({ id });
  return postJson(live().url("/webhooks/fire"), body, {
    ...signGenericV2(secret, body, Math.floor(Date.now() / 1000)),
    "x-request-id": id,
  });
};
const lastRun = () =>
  Object.values(
    JSON.parse(readFileSync(join(live().home.dir, "cron", "jobs.json"), "utf8")).jobs as Record<
      string,
      { last_run?: { trigger: string } }
    >,
  )[0]?.last_run;

describe("svc webhook subscribe --cron-job with a paused job", { timeout: 60_000 }, () => {
  it("warns at subscribe; events are answered 202 and dropped with a log line; after resume they fire", async () => {
    await perTest.start({
      files: { "agent/recorder.sh": RECORDER_AGENT },
      config: webhookConfig({}, { rate_limit: 1000 }, { agent: recorderAgent() }),
    });
    const cli = (...args: string[]) => svc(live().home, args);
    expect(
      (await cli("cron", "create", "--name", "triage", "--schedule", "1d", "--prompt", "job")).code,
    ).toBe(0);
    expect((await cli("cron", "pause", "triage")).code).toBe(0);
    const sub = await cli("webhook", "subscribe", "fire", "--cron-job", "triage");
    expect(sub.code).toBe(0);
    expect(sub.stderr).toContain(
      "Warning: cron job triage is paused: events are logged and dropped until svc cron resume triage",
    );
    const secret = JSON.parse(readFileSync(join(live().home.dir, "webhook_subscriptions.json"), "utf8")).fire
      .secret as string;

    expect(await send(secret, "p1")).toMatchObject({ status: 202, body: { status: "accepted" } });
    await vi.waitFor(
      () => {
        const line = live()
          .logs()
          .find((l) => l.msg === "[webhook] fire: cron_job triage is paused; event dropped");
        expect(line).toMatchObject({ delivery_id: "p1" });
      },
      { timeout: 10_000 },
    );
    expect(lastRun()).toBeUndefined();

    expect((await cli("cron", "resume", "triage")).code).toBe(0);
    expect((await send(secret, "p2")).status).toBe(202);
    await vi.waitFor(() => expect(lastRun()).toMatchObject({ trigger: "webhook:fire:p2" }), {
      timeout: 10_000,
    });
  });
});
