import { describe, expect, it } from "vitest";
import { gatewayPerTest, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { svc } from "./svc.js";

const gw = gatewayPerTest();

const job = (id: string, name: string, state: string) => ({
  id,
  name,
  schedule: "every 1h",
  prompt: "triage",
  deliver: "log",
  state,
  next_run: "2099-01-01T00:00:00.000Z",
  created_at: "2026-11-22T00:00:00.000Z",
});

/**
 * An event of a cron_job route whose job is paused (or disabled, or gone) is answered 202 accepted and dropped
 * without a run: the history says so, where the row otherwise read as a run still to come.
 */
describe("svc webhook deliveries: an event a cron_job route dropped", { timeout: 60_000 }, () => {
  it("shows why in NOTE and as reason in --json (the job paused, disabled, missing); a fired job's row has none", async () => {
    const live = await gw.start({
      files: {
        "cron/jobs.json": JSON.stringify({
          revision: 1,
          jobs: {
            j1: job("j1", "nightly", "paused"),
            j2: job("j2", "weekly", "disabled"),
            j3: job("j3", "hourly", "enabled"),
          },
        }),
      },
      config: webhookConfig({
        paused: { secret: "INSECURE_NO_AUTH", cron_job: "nightly" },
        off: { secret: "INSECURE_NO_AUTH", cron_job: "weekly" },
        fired: { secret: "INSECURE_NO_AUTH", cron_job: "hourly" },
      }),
    });
    for (const [route, id] of [
      ["paused", "p-1"],
      ["off", "o-1"],
      ["fired", "f-1"],
    ] as const) {
      const answer = await postJson(live.url(`/webhooks/${route}`), "{}", { "X-GitHub-Delivery": id });
      expect(answer.body).toMatchObject({ status: "accepted", delivery_id: id });
    }
    // The job is removed after the gateway started: its route's next event is dropped too.
    const res = await svc(live.home, ["cron", "remove", "hourly"]);
    expect(res.code).toBe(0);
    expect((await postJson(live.url("/webhooks/fired"), "{}", { "X-GitHub-Delivery": "f-2" })).status).toBe(
      202,
    );
    let rows: Array<{ id: string; reason?: string; run?: unknown }> = [];
    await expect
      .poll(
        async () => {
          const listed = await svc(live.home, ["webhook", "deliveries", "--json"]);
          rows = JSON.parse(listed.stdout) as typeof rows;
          return rows.find((r) => r.id === "f-1")?.run;
        },
        { timeout: 15_000, interval: 200 },
      )
      .toMatchObject({ outcome: "ok" });
    const reasonOf = (id: string) => rows.find((r) => r.id === id)?.reason;
    expect(reasonOf("p-1")).toBe("cron_job nightly is paused; event dropped");
    expect(reasonOf("o-1")).toBe("cron_job weekly is disabled; event dropped");
    expect(reasonOf("f-2")).toBe("cron_job hourly does not exist; event dropped");
    expect(reasonOf("f-1")).toBeUndefined();
    const table = (await svc(live.home, ["webhook", "deliveries", "paused"])).stdout;
    expect(table).toMatch(/p-1 +paused +- +202 accepted +- +- +cron_job nightly is paused; event dropped\n/);
  });
});
