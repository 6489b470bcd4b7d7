import { createHmac, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * Monitors (spec 1). Those that cannot compute an HMAC authenticate with what their webhook settings
 * offer: Prometheus Alertmanager's `http_config.authorization` (Bearer) or `basic_auth`, Grafana's
 * contact point credentials, uptime checkers' basic auth; the route secret is the token or password.
 * Sentry and PagerDuty sign the raw body in headers of their own.
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

    it("a client that sends Basic credentials only once challenged (Python's HTTPBasicAuthHandler, .NET, Java) gets a Basic challenge with a realm and is accepted on its retry", async () => {
      const first = await post(alert("firing"), {});
      expect(first.status).toBe(401);
      // What such a client looks for before it sends its credentials (urllib's AbstractBasicAuthHandler.rx).
      const challenge = /^Basic realm="([^"]*)"/i.exec(first.headers.get("www-authenticate") ?? "");
      expect(challenge, "401 without a Basic challenge").not.toBeNull();
      expect(await post(alert("firing"), { Authorization: basic("uptime", SECRET) })).toMatchObject({
        status: 202,
        body: { status: "accepted" },
      });
    });
  },
);

describe.each(["uws", "node"] as const)("monitors that sign, on the %s server", (http) => {
  const SENTRY = "3c5e0a9f7b2d4e6a8c1f0b3d5e7a9c2e4f6a8b0d2c4e6f8a0b2c4d6e8f0a2b4c";
  const PAGERDUTY = "pd-webhook-secret-Zk8sY3vQ";
  const GRAFANA = "grafana-contact-point-hmac-7Qw2";
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      http,
      config: webhookConfig(
        {
          sentry: { secret: SENTRY, events: ["issue"] },
          pagerduty: {
            secret: PAGERDUTY,
            filters: [{ field: "event.event_type", equals: "incident.triggered" }],
          },
          grafana: { secret: GRAFANA, filters: [{ field: "status", equals: "firing" }] },
        },
        { rate_limit: 1000 },
      ),
    });
  });
  afterAll(() => gw.stop());
  const hex = (key: string, body: string) => createHmac("sha256", key).update(body).digest("hex");

  it("Sentry: Sentry-Hook-Signature is checked, Sentry-Hook-Resource is the event, Request-ID the delivery id", async () => {
    const body = JSON.stringify({
      action: "created",
      installation: { uuid: "7a485448-a9e2-4c85-8a3c-4f44175783c9" },
      data: { issue: { id: "1170820242", title: "ZeroDivisionError: division by zero", level: "error" } },
      actor: { type: "application", id: "sentry", name: "Sentry" },
    });
    const requestId = randomUUID();
    const headers = (resource: string, signature = hex(SENTRY, body)) => ({
      "Request-ID": requestId,
      "Sentry-Hook-Resource": resource,
      "Sentry-Hook-Timestamp": String(Math.floor(gw.clock.now() / 1000)),
      "Sentry-Hook-Signature": signature,
    });
    const post = (h: Record<string, string>) => postJson(gw.url("/webhooks/sentry"), body, h);
    expect(await post(headers("issue"))).toMatchObject({
      status: 202,
      body: { status: "accepted", event: "issue", delivery_id: requestId },
    });
    expect(await post(headers("issue"))).toMatchObject({ status: 200, body: { status: "duplicate" } });
    expect(await post(headers("comment"))).toMatchObject({
      status: 200,
      body: { status: "ignored", event: "comment" },
    });
    expect(await post(headers("issue", hex("wrong", body)))).toMatchObject({ status: 401 });
  });

  it("PagerDuty v3: X-PagerDuty-Signature v1=<hex> entries are checked; filters read event.event_type", async () => {
    const event = (type: string) =>
      JSON.stringify({
        event: {
          id: "01DEN6YWQF1AV5VSXGJ2BSUMHR",
          event_type: type,
          resource_type: "incident",
          occurred_at: "2026-11-22T11:58:00.000Z",
          data: { id: "PGR0VU2", type: "incident", title: "db-1 disk full", status: "triggered" },
        },
      });
    const post = (body: string, signature: string) =>
      postJson(gw.url("/webhooks/pagerduty"), body, {
        "Content-Type": "application/json; charset=utf-8",
        "User-Agent": "PagerDuty-Webhook/V3.0",
        "X-Webhook-Subscription": "PY1OVR2",
        "X-PagerDuty-Signature": signature,
      });
    const triggered = event("incident.triggered");
    const rotating = `v1=${hex("previous-secret", triggered)},v1=${hex(PAGERDUTY, triggered)}`;
    expect(await post(triggered, rotating)).toMatchObject({ status: 202, body: { status: "accepted" } });
    const resolved = event("incident.resolved");
    expect(await post(resolved, `v1=${hex(PAGERDUTY, resolved)}`)).toMatchObject({
      status: 200,
      body: { status: "ignored", reason: "filter" },
    });
    expect(await post(triggered, `v1=${hex("previous-secret", triggered)}`)).toMatchObject({ status: 401 });
  });

  it("Grafana alerting: X-Grafana-Alerting-Signature over the body, or over '<ts>:<body>' with its timestamp header", async () => {
    const alert = (status: string) =>
      JSON.stringify({
        receiver: "svc",
        status,
        alerts: [{ status, labels: { alertname: "HighErrorRate" }, fingerprint: "57c6d9296de2ad39" }],
        groupKey: '{}:{alertname="HighErrorRate"}',
        version: "1",
      });
    const post = (body: string, headers: Record<string, string>) =>
      postJson(gw.url("/webhooks/grafana"), body, { "User-Agent": "Grafana", ...headers });
    const firing = alert("firing");
    expect(await post(firing, { "X-Grafana-Alerting-Signature": hex(GRAFANA, firing) })).toMatchObject({
      status: 202,
      body: { status: "accepted", route: "grafana" },
    });
    const ts = String(Math.floor(gw.clock.now() / 1000));
    const timed = {
      "X-Grafana-Alerting-Signature": hex(GRAFANA, `${ts}:${firing}`),
      "X-Grafana-Alerting-Signature-Timestamp": ts,
    };
    expect(await post(firing, timed)).toMatchObject({ status: 202, body: { status: "accepted" } });
    const resolved = alert("resolved");
    expect(await post(resolved, { "X-Grafana-Alerting-Signature": hex(GRAFANA, resolved) })).toMatchObject({
      status: 200,
      body: { status: "ignored", reason: "filter" },
    });
    expect(await post(firing, { "X-Grafana-Alerting-Signature": hex("wrong", firing) })).toMatchObject({
      status: 401,
      body: { error: "Invalid signature" },
    });
    // The signed timestamp (either header name) is within 300 s either side, inclusive.
    const now = Math.floor(gw.clock.now() / 1000);
    const at = (offset: number, name = "X-Grafana-Alerting-Signature-Timestamp") => ({
      "X-Grafana-Alerting-Signature": hex(GRAFANA, `${now + offset}:${firing}`),
      [name]: String(now + offset),
    });
    for (const offset of [-300, 300]) expect((await post(firing, at(offset))).status, `${offset}`).toBe(202);
    for (const offset of [-301, 301]) expect((await post(firing, at(offset))).status, `${offset}`).toBe(401);
    expect((await post(firing, at(-301, "X-Grafana-Alerting-Timestamp"))).status).toBe(401);
  });
});
