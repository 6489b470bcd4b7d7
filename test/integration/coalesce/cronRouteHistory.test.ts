import { afterEach, describe, expect, it, vi } from "vitest";
import { historyDir, readHistory, summarizeHistory } from "../../../src/io/stores/deliveryHistory.js";
import { oneJobStore } from "../../helpers/cronJobs.js";
import { inHome, startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

describe("delivery history of a cron_job route", () => {
  it("the fired job's delivery shows on the event's row, as an agent route's does", async () => {
    gw = await startTestGateway({
      files: {
        "cron/jobs.json": oneJobStore({ name: "nightly", prompt: "p", next_run: "2099-01-01T00:00:00.000Z" }),
      },
      config: webhookConfig({ fire: { secret: "INSECURE_NO_AUTH", cron_job: "nightly" } }),
    });
    expect((await postJson(gw.url("/webhooks/fire"), { n: 1 }, { "X-Request-ID": "c1" })).status).toBe(202);
    await gw.gateway.stop(); // waits for the fired run and writes the history out
    const [row] = summarizeHistory(readHistory(historyDir(gw.home.dir)));
    expect(row).toMatchObject({
      request: { id: "c1", route: "fire", outcome: "accepted" },
      run: { outcome: "ok" },
      delivery: { platform: "log", outcome: "ok" },
    });
  });

  it("a fired job whose run fails shows failed on the event's row and in the run metrics, logged once, as its last_run says", async () => {
    gw = await startTestGateway({
      files: {
        "cron/jobs.json": oneJobStore({ name: "nightly", prompt: "p", next_run: "2099-01-01T00:00:00.000Z" }),
        "agent/fail.sh": "cat >/dev/null; echo broken >&2; exit 3",
      },
      config: webhookConfig(
        { fire: { secret: "INSECURE_NO_AUTH", cron_job: "nightly" } },
        {},
        { agent: { provider: "command", command: ["bash", inHome("agent/fail.sh")] } },
      ),
    });
    expect((await postJson(gw.url("/webhooks/fire"), { n: 1 }, { "X-Request-ID": "c2" })).status).toBe(202);
    const live = gw;
    await vi.waitFor(
      async () => {
        const text = await (await fetch(live.url("/metrics"))).text();
        expect(text).toMatch(/^svc_run_duration_seconds_count\{outcome="failed"\} 1$/m);
        expect(text).not.toMatch(/^svc_run_duration_seconds_count\{outcome="ok"\} [1-9]/m);
      },
      { timeout: 10_000, interval: 20 },
    );
    await gw.gateway.stop();
    const [row] = summarizeHistory(readHistory(historyDir(gw.home.dir)));
    expect(row).toMatchObject({
      request: { id: "c2", route: "fire", outcome: "accepted" },
      run: { outcome: "failed", error: expect.stringContaining("exited with code 3: broken") },
    });
    const failures = gw.logs().filter((line) => /run failed/.test(line.msg));
    expect(failures.map((line) => line.msg)).toEqual(["[cron] nightly: run failed"]);
  });
});
