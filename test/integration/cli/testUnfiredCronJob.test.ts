import { afterEach, describe, expect, it } from "vitest";
import { oneJobStore } from "../../helpers/cronJobs.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { svc } from "./svc.js";

let gw: TestGateway;
afterEach(() => gw.stop());

/**
 * A cron_job subscription whose job the gateway does not fire is still answered 202 accepted: svc webhook
 * test says on stderr that the event is dropped without a run, and why, rather than leave the 202 to read
 * as a run on its way.
 */
describe("svc webhook test (and redeliver) of a cron_job route whose job is not fired", {
  timeout: 90_000,
}, () => {
  it("names a paused job with the command that resumes it, and a job not in the store", async () => {
    gw = await startTestGateway({
      config: webhookConfig({
        "static-fires-paused": { secret: "static-fires-secret-6620", cron_job: "digest-nightly" },
      }),
    });
    const store = JSON.parse(
      oneJobStore({ name: "digest-nightly", prompt: "p", next_run: "2099-01-01T00:00:00.000Z" }),
    );
    store.jobs.j1.state = "paused";
    gw.home.write("cron/jobs.json", JSON.stringify(store));
    gw.home.write(
      "webhook_subscriptions.json",
      JSON.stringify({
        "fires-paused": { secret: "fires-paused-secret-5521", cron_job: "digest-nightly", enabled: true },
        "fires-gone": { secret: "fires-gone-secret-8804", cron_job: "digest-weekly", enabled: true },
        "fires-nothing": { secret: "fires-nothing-secret-3317", enabled: true },
      }),
      0o600,
    );
    const port = String(gw.gateway.port);
    const paused = await svc(gw.home, ["webhook", "test", "fires-paused", "--port", port]);
    expect(paused.code).toBe(0);
    expect(paused.stdout).toContain("202 Accepted");
    expect(paused.stderr).toContain(
      "Note: fires-paused fires cron job digest-nightly, which is paused (svc cron resume digest-nightly): the gateway answers 202 accepted and drops the event without a run",
    );
    const gone = await svc(gw.home, ["webhook", "test", "fires-gone", "--port", port]);
    expect(gone.stdout).toContain("202 Accepted");
    expect(gone.stderr).toContain(
      `Note: fires-gone fires cron job digest-weekly, which is not in ${gw.home.dir}/cron/jobs.json (svc cron list): the gateway answers 202 accepted and drops the event without a run`,
    );
    // svc webhook redeliver notes it of the config.yaml route it sends to.
    const at = new Date().toISOString();
    gw.home.write(
      "deliveries/history.jsonl",
      `${JSON.stringify({ kind: "request", id: "static-fired-7702", at, route: "static-fires-paused", status: 202, outcome: "accepted", content_type: "application/json", payload_encoding: "utf8", payload: '{"n":1}' })}\n`,
      0o600,
    );
    const redelivered = await svc(gw.home, ["webhook", "redeliver", "static-fired-7702", "--port", port]);
    expect(redelivered.stdout).toContain("202 Accepted");
    expect(redelivered.stderr).toContain(
      "Note: static-fires-paused fires cron job digest-nightly, which is paused (svc cron resume digest-nightly): the gateway answers 202 accepted",
    );
    const agent = await svc(gw.home, ["webhook", "test", "fires-nothing", "--port", port]);
    expect(agent.stdout).toContain("202 Accepted");
    expect(agent.stderr).not.toContain("Note:");
    // svc webhook list says the same of each such subscription (its ENABLED "yes" alone read as served).
    const listed = await svc(gw.home, ["webhook", "list"]);
    expect(listed.code).toBe(0);
    expect(listed.stderr.split("\n").filter((line) => line.startsWith("Note:"))).toEqual([
      `Note: fires-gone fires cron job digest-weekly, which is not in ${gw.home.dir}/cron/jobs.json (svc cron list): the gateway answers 202 accepted and drops its events without a run`,
      "Note: fires-paused fires cron job digest-nightly, which is paused (svc cron resume digest-nightly): the gateway answers 202 accepted and drops its events without a run",
    ]);
    // So does svc webhook enable: the route it turns on answers, and drops what it answers.
    const enabled = await svc(gw.home, ["webhook", "enable", "fires-gone"]);
    expect(enabled).toMatchObject({ code: 0, stdout: "Enabled fires-gone\n" });
    expect(enabled.stderr).toContain("Note: fires-gone fires cron job digest-weekly, which is not in ");
    expect(enabled.stderr).toContain("drops its events without a run");
  });
});
