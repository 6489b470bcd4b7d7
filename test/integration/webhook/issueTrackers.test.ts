import { createHmac, randomUUID } from "node:crypto";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * Issue trackers (spec 1) as they send. Linear: `Linear-Signature` = hex HMAC-SHA256
 * of the raw body, `Linear-Event` = the entity type, `Linear-Delivery` = the delivery UUID, and its send
 * time as `webhookTimestamp` (Unix ms) inside the signed body, which Linear's own verifier
 * (`@linear/sdk/webhooks` LinearWebhookClient.verify) requires to be recent. Jira Cloud (admin webhooks
 * with a secret): `X-Hub-Signature: sha256=<hex>` (WebSub), the event only in the body's `webhookEvent`,
 * and `X-Atlassian-Webhook-Identifier`, unchanged across Jira's retries (counted in
 * `X-Atlassian-Webhook-Retry`). Azure DevOps Boards (service hooks): basic authentication with the
 * secret as password, the event only in the body's `eventType`.
 */

const SECRET = "lin_wh_5c3b8b7e0f3a4b6c9d2e1f0a";
const JIRA_SECRET = "kQ2mX9vR4tY7wZ1aB3cD5eF8";

describe.each(["uws", "node"] as const)("issue tracker webhooks on the %s server", (http) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      http,
      config: webhookConfig(
        {
          linear: { secret: SECRET },
          issues: { secret: SECRET, events: ["Issue"] },
          jira: { secret: JIRA_SECRET, events: ["jira:issue_created"] },
          boards: { secret: JIRA_SECRET, events: ["workitem.created"] },
        },
        { rate_limit: 1000 },
      ),
    });
  });
  afterAll(() => gw.stop());

  const issueEvent = (webhookTimestamp: number, type = "Issue") =>
    JSON.stringify({
      action: "create",
      type,
      data: { id: "9cfb482a-81e3-4154-b5b9-2c805e70a02d", identifier: "ENG-42", title: "Crash on save" },
      url: "https://linear.app/acme/issue/ENG-42/crash-on-save",
      createdAt: new Date(webhookTimestamp).toISOString(),
      organizationId: "1d9e5b0a-6d4c-4b8e-9a1f-7c2e3d4f5a6b",
      webhookTimestamp,
      webhookId: "00000000-0000-4000-8000-000000000001",
    });
  const linearHeaders = (body: string, delivery: string, event = "Issue", secret = SECRET) => ({
    "Linear-Signature": createHmac("sha256", secret).update(body).digest("hex"),
    "Linear-Event": event,
    "Linear-Delivery": delivery,
    "User-Agent": "Linear-Webhook",
  });
  const post = (route: string, body: string | Buffer, headers: Record<string, string>) =>
    postJson(gw.url(`/webhooks/${route}`), body, headers);

  it("Linear: accepted; the event is Linear-Event, the delivery id Linear-Delivery, and a retry is a duplicate", async () => {
    const body = issueEvent(gw.clock.now());
    const delivery = randomUUID();
    expect(await post("linear", body, linearHeaders(body, delivery))).toMatchObject({
      status: 202,
      body: { status: "accepted", route: "linear", event: "Issue", delivery_id: delivery },
    });
    expect(await post("linear", body, linearHeaders(body, delivery))).toMatchObject({
      status: 200,
      body: { status: "duplicate" },
    });
  });

  it("Linear: the events list selects on the entity type", async () => {
    const body = issueEvent(gw.clock.now(), "Comment");
    expect(await post("issues", body, linearHeaders(body, randomUUID(), "Comment"))).toMatchObject({
      status: 200,
      body: { status: "ignored", event: "Comment" },
    });
  });

  it("Linear: a wrong secret, a changed body or a webhookTimestamp more than 300 s away is 401", async () => {
    const now = gw.clock.now();
    const body = issueEvent(now);
    const tampered = body.replace("Crash on save", "Crash on load");
    const old = issueEvent(now - 301_000);
    for (const [sent, headers] of [
      [body, linearHeaders(body, randomUUID(), "Issue", "lin_wh_other")],
      [tampered, linearHeaders(body, randomUUID())],
      [old, linearHeaders(old, randomUUID())],
    ] as const) {
      expect(await post("linear", sent, headers)).toMatchObject({
        status: 401,
        body: { error: "Invalid signature" },
      });
    }
    const edge = issueEvent(now - 300_000);
    expect((await post("linear", edge, linearHeaders(edge, randomUUID()))).status).toBe(202);
  });

  it("Linear: a compressed body signed as sent is judged by the webhookTimestamp of its JSON: stale is 401", async () => {
    // A sender that signs the gzip bytes it sends (the check tries them after the decoded JSON): the replay
    // window is still read from the JSON those bytes decode to, not skipped because the bytes are no JSON.
    const now = gw.clock.now();
    const compressedHeaders = (sent: Buffer) => ({
      ...linearHeaders("", randomUUID()),
      "Content-Encoding": "gzip",
      "Linear-Signature": createHmac("sha256", SECRET).update(sent).digest("hex"),
    });
    const stale = gzipSync(issueEvent(now - 3_600_000));
    expect(await post("linear", stale, compressedHeaders(stale))).toMatchObject({
      status: 401,
      body: { error: "Invalid signature" },
    });
    const fresh = gzipSync(issueEvent(now));
    expect(await post("linear", fresh, compressedHeaders(fresh))).toMatchObject({
      status: 202,
      body: { status: "accepted", route: "linear", event: "Issue" },
    });
  });

  const jiraEvent = (webhookEvent: string) =>
    JSON.stringify({
      timestamp: gw.clock.now(),
      webhookEvent,
      issue_event_type_name: "issue_created",
      user: { accountId: "5b10a2844c20165700ede21g", displayName: "Ada" },
      issue: { id: "10002", key: "ENG-7", fields: { summary: "Login fails" } },
    });
  const jiraHeaders = (body: string, identifier: string, retry?: number) => ({
    "X-Hub-Signature": `sha256=${createHmac("sha256", JIRA_SECRET).update(body).digest("hex")}`,
    "X-Atlassian-Webhook-Identifier": identifier,
    "X-Atlassian-Webhook-Flow": "Primary",
    ...(retry === undefined ? {} : { "X-Atlassian-Webhook-Retry": String(retry) }),
  });

  it("Jira: the event is the body's webhookEvent, and a retry with the same identifier is a duplicate", async () => {
    const body = jiraEvent("jira:issue_created");
    const identifier = String(Date.now());
    expect(await post("jira", body, jiraHeaders(body, identifier))).toMatchObject({
      status: 202,
      body: { status: "accepted", route: "jira", event: "jira:issue_created", delivery_id: identifier },
    });
    expect(await post("jira", body, jiraHeaders(body, identifier, 1))).toMatchObject({
      status: 200,
      body: { status: "duplicate" },
    });
    const updated = jiraEvent("jira:issue_updated");
    expect(await post("jira", updated, jiraHeaders(updated, `${identifier}-2`))).toMatchObject({
      status: 200,
      body: { status: "ignored", event: "jira:issue_updated" },
    });
  });

  it("Azure DevOps: basic authentication with the route secret as password; the event is the body's eventType", async () => {
    const workItem = (eventType: string) =>
      JSON.stringify({
        subscriptionId: "00000000-0000-0000-0000-000000000000",
        notificationId: 3,
        id: "1ca023d6-6cff-49dd-b3d1-302b69311810",
        eventType,
        publisherId: "tfs",
        message: { text: "Bug #5 (Some great new idea!) created by Jamal Hartnett." },
        resource: { id: 5, rev: 1, fields: { "System.Title": "Some great new idea!" } },
        createdDate: new Date(gw.clock.now()).toISOString(),
      });
    const auth = (password: string) => ({
      Authorization: `Basic ${Buffer.from(`azure-devops:${password}`).toString("base64")}`,
    });
    expect(await post("boards", workItem("workitem.created"), auth(JIRA_SECRET))).toMatchObject({
      status: 202,
      body: { status: "accepted", route: "boards", event: "workitem.created" },
    });
    expect(await post("boards", workItem("workitem.updated"), auth(JIRA_SECRET))).toMatchObject({
      status: 200,
      body: { status: "ignored", event: "workitem.updated" },
    });
    expect(await post("boards", workItem("workitem.created"), auth("wrong"))).toMatchObject({ status: 401 });
  });
});
