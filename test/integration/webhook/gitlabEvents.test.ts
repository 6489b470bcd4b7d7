import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  RECORDER_AGENT,
  recorderAgent,
  startTestGateway,
  type TestGateway,
  waitForRun,
  webhookConfig,
} from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * GitLab as the token host of spec 5 and 6, with GitLab's documented webhook payloads
 * (test/fixtures/gitlab): the `X-Gitlab-Event` value is compared verbatim (`Merge Request Hook`, not
 * the body's `merge_request`), the token is `X-Gitlab-Token`, and filters and templates read the
 * real payload shapes.
 */
// biome-ignore lint/suspicious/noExplicitAny: fixtures are read by deep dotted access
const fixture = (name: string): Record<string, any> =>
  JSON.parse(readFileSync(new URL(`../../fixtures/gitlab/${name}.json`, import.meta.url), "utf8"));

const TOKEN = "gitlab-secret-token";

describe("GitLab webhooks (token host)", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      files: { "agent/recorder.sh": RECORDER_AGENT },
      config: webhookConfig(
        {
          mr_by_header: {
            secret: TOKEN,
            events: ["Merge Request Hook"],
            filters: [{ field: "object_attributes.action", in: ["open", "reopen", "update"] }],
            prompt:
              "Review !{object_attributes.iid} '{object_attributes.title}' ({object_attributes.source_branch} -> {object_attributes.target_branch}) by {user.username}; labels {labels}",
          },
          mr_by_body_name: { secret: TOKEN, events: ["merge_request"] },
          mr_comments: {
            secret: TOKEN,
            events: ["Note Hook"],
            filters: [
              { field: "object_attributes.noteable_type", equals: "MergeRequest" },
              { field: "headers.X-Gitlab-Event", equals: "Note Hook" },
            ],
            prompt: "{user.username} on !{merge_request.iid}: {object_attributes.note}",
          },
          pushes: {
            secret: TOKEN,
            events: ["Push Hook"],
            filters: [{ field: "ref", regex: "^refs/heads/(master|main)$" }],
            prompt:
              "{user_name} pushed {total_commits_count} commits to {project.path_with_namespace}: {commits.1.title}",
          },
        },
        { rate_limit: 1000 },
        { agent: recorderAgent() },
      ),
    });
  });
  afterAll(() => gw.stop());

  const send = (route: string, event: string, body: unknown, extra: Record<string, string> = {}) =>
    postJson(gw.url(`/webhooks/${route}`), body, {
      "X-Gitlab-Event": event,
      "X-Gitlab-Token": TOKEN,
      ...extra,
    });

  it("Merge Request Hook: accepted by the header value, the event as sent reaches the agent, templates read the real payload", async () => {
    const res = await send("mr_by_header", "Merge Request Hook", fixture("merge_request"), {
      "Idempotency-Key": "gl-mr-1",
    });
    expect(res).toMatchObject({
      status: 202,
      body: {
        status: "accepted",
        route: "mr_by_header",
        event: "Merge Request Hook",
        delivery_id: "gl-mr-1",
      },
    });
    const run = await waitForRun(gw, "gl-mr-1");
    expect(run.event).toBe("Merge Request Hook");
    const labels = JSON.stringify(fixture("merge_request").labels);
    expect(run.prompt).toBe(`Review !1 'MS-Viewport' (ms-viewport -> master) by root; labels ${labels}`);
  });

  it("the body's event_type (merge_request) does not stand in for the header: a route listing it ignores the real hook", async () => {
    const res = await send("mr_by_body_name", "Merge Request Hook", fixture("merge_request"));
    expect(res).toMatchObject({ status: 200, body: { status: "ignored", event: "Merge Request Hook" } });
  });

  it("a merged MR fails the action filter; a wrong X-Gitlab-Token is 401", async () => {
    const merged = fixture("merge_request");
    merged.object_attributes.action = "merge";
    expect(await send("mr_by_header", "Merge Request Hook", merged)).toMatchObject({
      status: 200,
      body: { status: "ignored", reason: "filter" },
    });
    const res = await postJson(gw.url("/webhooks/mr_by_header"), fixture("merge_request"), {
      "X-Gitlab-Event": "Merge Request Hook",
      "X-Gitlab-Token": `${TOKEN}x`,
    });
    expect(res).toMatchObject({ status: 401, body: { error: "Invalid signature" } });
  });

  it("a resend under the same Idempotency-Key is a duplicate; a shared X-Gitlab-Event-UUID is not a delivery id", async () => {
    // GitLab gives a hook triggered by another hook the X-Gitlab-Event-UUID of the first: two events.
    const headers = (key: string) => ({
      "Idempotency-Key": key,
      "X-Gitlab-Event-UUID": "gl-event-uuid-shared",
      "X-Gitlab-Webhook-UUID": "gl-hook-uuid",
      "X-Gitlab-Instance": "https://gitlab.example.com",
    });
    const first = await send(
      "mr_by_header",
      "Merge Request Hook",
      fixture("merge_request"),
      headers("gl-k1"),
    );
    expect(first).toMatchObject({ status: 202, body: { status: "accepted", delivery_id: "gl-k1" } });
    const resent = await send(
      "mr_by_header",
      "Merge Request Hook",
      fixture("merge_request"),
      headers("gl-k1"),
    );
    expect(resent).toMatchObject({ status: 200, body: { status: "duplicate" } });
    const other = await send(
      "mr_by_header",
      "Merge Request Hook",
      fixture("merge_request"),
      headers("gl-k2"),
    );
    expect(other).toMatchObject({ status: 202, body: { status: "accepted", delivery_id: "gl-k2" } });
    await waitForRun(gw, "gl-k1");
    await waitForRun(gw, "gl-k2");
  });

  it("without Idempotency-Key (GitLab before 17.4) each resend is a new delivery, also with the same X-Gitlab-Event-UUID", async () => {
    const resend = () =>
      send("mr_by_header", "Merge Request Hook", fixture("merge_request"), {
        "X-Gitlab-Event-UUID": "gl-event-uuid-old",
      });
    const ids = [];
    for (const answer of [await resend(), await resend()]) {
      expect(answer).toMatchObject({ status: 202, body: { status: "accepted" } });
      ids.push(String(answer.body.delivery_id));
    }
    expect(ids[0]).not.toBe(ids[1]);
    expect(ids).not.toContain("gl-event-uuid-old");
  });

  it("Note Hook on a merge request: filters on the payload and on headers.X-Gitlab-Event", async () => {
    const res = await send("mr_comments", "Note Hook", fixture("note_merge_request"), {
      "Idempotency-Key": "gl-note-1",
    });
    expect(res.status).toBe(202);
    expect((await waitForRun(gw, "gl-note-1")).prompt).toBe("root on !1: This MR needs work.");
    const onIssue = fixture("note_merge_request");
    onIssue.object_attributes.noteable_type = "Issue";
    expect(await send("mr_comments", "Note Hook", onIssue)).toMatchObject({
      status: 200,
      body: { status: "ignored", reason: "filter" },
    });
  });

  it("Push Hook: a regex on ref selects the default branch; list items are addressed by index", async () => {
    const res = await send("pushes", "Push Hook", fixture("push"), { "Idempotency-Key": "gl-push-1" });
    expect(res.status).toBe(202);
    expect((await waitForRun(gw, "gl-push-1")).prompt).toBe(
      "John Smith pushed 4 commits to mike/diaspora: fixed readme",
    );
    const tag = { ...fixture("push"), ref: "refs/heads/feature/x" };
    expect(await send("pushes", "Push Hook", tag)).toMatchObject({
      status: 200,
      body: { status: "ignored", reason: "filter" },
    });
    // Case and spelling matter: GitLab's own value only.
    expect(await send("pushes", "push hook", fixture("push"))).toMatchObject({
      status: 200,
      body: { status: "ignored", event: "push hook" },
    });
  });
});

/**
 * GitLab's signing token (GitLab 18): a `whsec_` key GitLab signs with in Standard Webhooks form
 * (`webhook-id` = the Idempotency-Key, `webhook-timestamp`, `webhook-signature: v1,<base64>`). A hook
 * with both a secret token and a signing token sends `X-Gitlab-Token` beside the signature, and the
 * route's one secret may be either of them.
 */
describe("GitLab with a signing token and a secret token both configured", () => {
  const SIGNING = `whsec_${randomBytes(32).toString("base64")}`;
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      config: webhookConfig(
        { by_signing: { secret: SIGNING }, by_token: { secret: TOKEN } },
        { rate_limit: 1000 },
      ),
    });
  });
  afterAll(() => gw.stop());

  const gitlab = (route: string, id: string, body: string, token: string, signingKey = SIGNING) => {
    const at = new Date(gw.clock.now());
    return postJson(gw.url(`/webhooks/${route}`), body, {
      "X-Gitlab-Event": "Push Hook",
      "X-Gitlab-Token": token,
      "Idempotency-Key": id,
      "webhook-id": id,
      "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
      "webhook-signature": new StandardWebhook(signingKey).sign(id, at, body),
    });
  };
  const body = JSON.stringify(fixture("push"));

  it("a route holding the signing token accepts the signed request although X-Gitlab-Token is the other secret", async () => {
    expect(await gitlab("by_signing", "gl-both-1", body, TOKEN)).toMatchObject({
      status: 202,
      body: { status: "accepted", route: "by_signing", event: "Push Hook", delivery_id: "gl-both-1" },
    });
  });

  it("a route holding the secret token accepts it whatever key signed", async () => {
    expect(await gitlab("by_token", "gl-both-2", body, TOKEN)).toMatchObject({ status: 202 });
  });

  it("neither matching is 401, and a tampered body is 401 on the signing-token route", async () => {
    const otherKey = `whsec_${randomBytes(32).toString("base64")}`;
    expect(await gitlab("by_signing", "gl-both-3", body, "not-it", otherKey)).toMatchObject({
      status: 401,
      body: { error: "Invalid signature" },
    });
    expect(await gitlab("by_token", "gl-both-4", body, `${TOKEN}x`)).toMatchObject({ status: 401 });
    const at = new Date(gw.clock.now());
    const tampered = await postJson(gw.url("/webhooks/by_signing"), `${body} `, {
      "X-Gitlab-Token": TOKEN,
      "webhook-id": "gl-both-5",
      "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
      "webhook-signature": new StandardWebhook(SIGNING).sign("gl-both-5", at, body),
    });
    expect(tampered.status).toBe(401);
  });
});
