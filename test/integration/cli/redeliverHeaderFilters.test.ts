import { readFileSync } from "node:fs";
import { join } from "node:path";
import { sign as signGithub } from "@octokit/webhooks-methods";
import { afterEach, describe, expect, it } from "vitest";
import { type RequestRecord, readHistory } from "../../../src/io/stores/deliveryHistory.js";
import {
  RECORDER_AGENT,
  recorderAgent,
  startTestGateway,
  type TestGateway,
  waitForRun,
  webhookConfig,
} from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { svc } from "./svc.js";

const SECRET = "header-filter-history-secret-5521";
let gw: TestGateway;
afterEach(() => gw.stop());

describe("svc webhook redeliver of an event a route's filters took by its headers", {
  timeout: 120_000,
}, () => {
  it("keeps the headers the filters read (nested groups too, never the signature) and sends them again: the redelivery runs", async () => {
    gw = await startTestGateway({
      config: webhookConfig(
        {
          tenants: {
            secret: SECRET,
            prompt: "Order {order}",
            filters: [
              { field: "headers.X-Tenant-Name", equals: "acme-north-7" },
              {
                any: [
                  { field: "headers.X-Stage", in: ["production"] },
                  { field: "order", equals: 0 },
                ],
              },
              { not: { field: "headers.X-Region", missing: true } },
            ],
          },
        },
        {},
        { agent: recorderAgent() },
      ),
      files: { "agent/recorder.sh": RECORDER_AGENT },
    });
    const body = '{"order":41}';
    const signature = await signGithub(SECRET, body);
    const headers = {
      "X-GitHub-Event": "order",
      "X-Hub-Signature-256": signature,
      "X-Tenant-Name": "acme-north-7",
      "X-Stage": "production",
      "X-Region": "eu-west-9",
    };
    const url = gw.url("/webhooks/tenants");
    expect((await postJson(url, body, { ...headers, "X-GitHub-Delivery": "hdr-1" })).status).toBe(202);
    await waitForRun(gw, "hdr-1");
    // Without the tenant header the route ignores it: the filters do read it.
    const { "X-Tenant-Name": _t, ...withoutTenant } = headers;
    const ignored = await postJson(url, body, { ...withoutTenant, "X-GitHub-Delivery": "hdr-2" });
    expect(ignored.body).toMatchObject({ status: "ignored", reason: "filter" });

    const record = readHistory(join(gw.home.dir, "deliveries")).find(
      (r): r is RequestRecord => r.kind === "request" && r.id === "hdr-1",
    );
    expect(record?.headers).toEqual([
      ["x-tenant-name", "acme-north-7"],
      ["x-stage", "production"],
      ["x-region", "eu-west-9"],
    ]);
    expect(readFileSync(join(gw.home.dir, "deliveries", "history.jsonl"), "utf8")).not.toContain(signature);

    const again = await svc(gw.home, ["webhook", "redeliver", "hdr-1", "--port", String(gw.gateway.port)]);
    expect(again).toMatchObject({ code: 0, stdout: expect.stringContaining("202 Accepted") });
    const newId = /as (redelivery-[0-9a-f]{8}-hdr-1)\)/.exec(again.stdout)?.[1] as string;
    expect(await waitForRun(gw, newId)).toMatchObject({ prompt: expect.stringContaining("Order 41") });
  });

  it("a record written before headers were kept redelivers as before (without them)", async () => {
    gw = await startTestGateway({
      config: webhookConfig(
        { plain: { secret: SECRET, prompt: "Order {order}" } },
        {},
        { agent: recorderAgent() },
      ),
      files: { "agent/recorder.sh": RECORDER_AGENT },
    });
    const at = new Date().toISOString();
    gw.home.write(
      "deliveries/history.jsonl",
      `${JSON.stringify({ kind: "request", id: "old-record-1", at, route: "plain", status: 202, outcome: "accepted", event: "order", content_type: "application/json", payload_encoding: "utf8", payload: '{"order":9}' })}\n`,
      0o600,
    );
    const again = await svc(gw.home, [
      "webhook",
      "redeliver",
      "old-record-1",
      "--port",
      String(gw.gateway.port),
    ]);
    expect(again).toMatchObject({ code: 0, stdout: expect.stringContaining("202 Accepted") });
  });
});
