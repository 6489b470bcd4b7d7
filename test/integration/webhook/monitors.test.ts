import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * Monitors (spec 1) that cannot compute an HMAC and authenticate with what their webhook settings
 * offer: Prometheus Alertmanager's `http_config.authorization` (Bearer) or `basic_auth`, Grafana's
 * contact point credentials, uptime checkers' basic auth. The route secret is the token or password.
 */

const SECRET = "am-7Qf2kZ9xW4";

/** An Alertmanager webhook body (version 4), as `webhook_configs` sends it. */
const alert = (status: "firing" | "resolved") =>
  JSON.stringify({
    version: "4",
    groupKey: '{}:{alertname="DiskFull"}',
    status,
    receiver: "svc",
    groupLabels: { alertname: "DiskFull" },
    commonLabels: { alertname: "DiskFull", severity: "page", instance: "db-1:9100" },
    commonAnnotations: { summary: "Disk on db-1 is 97% full" },
    externalURL: "http://alertmanager:9093",
    alerts: [
      {
        status,
        labels: { alertname: "DiskFull", instance: "db-1:9100" },
        annotations: { summary: "Disk on db-1 is 97% full" },
        startsAt: "2026-11-22T11:58:00Z",
        endsAt: "0001-01-01T00:00:00Z",
        fingerprint: "5f2c0a1b9e3d4c7a",
      },
    ],
  });
const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;

describe.each(["uws", "node"] as const)(
  "monitors with Authorization credentials on the %s server",
  (http) => {
    let gw: TestGateway;
    beforeAll(async () => {
      gw = await startTestGateway({
        http,
        config: webhookConfig(
          { alerts: { secret: SECRET, filters: [{ field: "status", equals: "firing" }] } },
          { rate_limit: 1000 },
        ),
      });
    });
    afterAll(() => gw.stop());
    const post = (body: string, headers: Record<string, string>) =>
      postJson(gw.url("/webhooks/alerts"), body, { "User-Agent": "Alertmanager/0.28.1", ...headers });

    it("Authorization: Bearer <route secret> (Alertmanager http_config.authorization) is accepted", async () => {
      expect(await post(alert("firing"), { Authorization: `Bearer ${SECRET}` })).toMatchObject({
        status: 202,
        body: { status: "accepted", route: "alerts" },
      });
      expect(await post(alert("resolved"), { Authorization: `Bearer ${SECRET}` })).toMatchObject({
        status: 200,
        body: { status: "ignored", reason: "filter" },
      });
    });

    it("Basic credentials whose password is the route secret (basic_auth) are accepted", async () => {
      expect(await post(alert("firing"), { Authorization: basic("alertmanager", SECRET) })).toMatchObject({
        status: 202,
        body: { status: "accepted" },
      });
    });

    it("a wrong token or password is 401 Invalid signature, as is no credential at all", async () => {
      for (const headers of [
        { Authorization: "Bearer am-wrong" },
        { Authorization: basic("alertmanager", "am-wrong") },
        { Authorization: basic(SECRET, "am-wrong") },
        {},
      ]) {
        expect(await post(alert("firing"), headers)).toMatchObject({
          status: 401,
          body: { error: "Invalid signature" },
        });
      }
    });
  },
);
