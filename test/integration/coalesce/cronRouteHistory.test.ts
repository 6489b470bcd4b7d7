import { afterEach, describe, expect, it } from "vitest";
import { historyDir, readHistory, summarizeHistory } from "../../../src/io/stores/deliveryHistory.js";
import { oneJobStore } from "../../helpers/cronJobs.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
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
});
