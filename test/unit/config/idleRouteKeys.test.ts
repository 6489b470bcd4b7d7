import { describe, expect, it } from "vitest";
import { routeTable } from "../../../src/actors/routes.js";
import { configSchema } from "../../../src/config/schema.js";
import { idleRouteKeyWarnings } from "../../../src/gateway/idleRouteKeys.js";

const warnings = (routes: Record<string, unknown>) =>
  idleRouteKeyWarnings(
    routeTable(configSchema.parse({ platforms: { webhook: { secret: "s", routes } } })),
    "config.yaml",
  );

describe("route keys that the route's other keys leave without effect", () => {
  it("an events entry that is blank or has spaces at an end never matches: named", () => {
    expect(warnings({ e: { events: ["push", "", " pull_request", "Merge Request Hook"] } })).toEqual([
      '[webhook] config.yaml: platforms.webhook.routes.e.events[1]: "" never matches: an event type is never blank — write the event type, or remove the entry',
      '[webhook] config.yaml: platforms.webhook.routes.e.events[2]: " pull_request" never matches: an event type is sent without spaces at its ends — write "pull_request"',
    ]);
  });

  it("an events entry or a headers.* filter value with a non-ASCII character at an end is named: a header never brings it", () => {
    expect(
      warnings({
        u: {
          events: ["café", "tëam-α-deploy", "日本"],
          filters: [
            { field: "headers.X-Team", equals: "tëam-α" },
            {
              any: [
                { field: "headers.X-Env", in: ["prod", "ünit"] },
                { not: { field: "headers.X-A", not_equals: "é" } },
              ],
            },
            { field: "team", equals: "tëam-α" },
            { field: "headers.X-Team", equals: "tëam-α-x" },
          ],
        },
      }),
    ).toEqual([
      '[webhook] config.yaml: platforms.webhook.routes.u.events[0]: "café" matches only an event type the body names (event_type): a header\'s value reaches svc without spaces, control or non-ASCII characters at its ends, so X-Forge-Event: café reads as "caf"',
      '[webhook] config.yaml: platforms.webhook.routes.u.events[2]: "日本" matches only an event type the body names (event_type): a header\'s value reaches svc without spaces, control or non-ASCII characters at its ends, so X-Forge-Event: 日本 reads as ""',
      '[webhook] config.yaml: platforms.webhook.routes.u: filters[0].equals: "tëam-α" never equals headers.X-Team: a header\'s value reaches svc without spaces, control or non-ASCII characters at its ends (it would read "tëam-") — match the part inside with contains or regex',
      '[webhook] config.yaml: platforms.webhook.routes.u: filters[1].any[0].in[1]: "ünit" never equals headers.X-Env: a header\'s value reaches svc without spaces, control or non-ASCII characters at its ends (it would read "nit") — match the part inside with contains or regex',
      '[webhook] config.yaml: platforms.webhook.routes.u: filters[1].any[1].not.not_equals: "é" never equals headers.X-A: a header\'s value reaches svc without spaces, control or non-ASCII characters at its ends (it would read "") — match the part inside with contains or regex',
    ]);
  });

  it("an events entry with a * (no wildcard: events compares exactly) is named with what to write", () => {
    expect(warnings({ w: { events: ["*", "pull_request.*", "push"] } })).toEqual([
      '[webhook] config.yaml: platforms.webhook.routes.w.events[0]: "*" never matches: events compares the exact event type and has no wildcard — leave events out (or empty) to accept every event',
      '[webhook] config.yaml: platforms.webhook.routes.w.events[1]: "pull_request.*" never matches: events compares the exact event type and has no wildcard — list each event type, or leave events out and match the type with a filter (field: event, regex: ...)',
    ]);
  });

  it("a GitHub event qualified by its action (pull_request.opened) is named: the action is a body field, for a filter", () => {
    expect(
      warnings({
        g: {
          events: ["pull_request.opened", "issue_comment.created", "pull_request_review.submitted", "push"],
        },
        // Dotted names of the senders that put them in the body's type (Stripe, Svix) are event types.
        s: { events: ["invoice.paid", "customer.subscription.created", "user.created", "pull_request"] },
      }),
    ).toEqual([
      '[webhook] config.yaml: platforms.webhook.routes.g.events[0]: "pull_request.opened" never matches a GitHub, Gitea or Forgejo event: they send pull_request as the event type and opened in the body\'s action — list pull_request and add a filter {field: action, in: [opened]}',
      '[webhook] config.yaml: platforms.webhook.routes.g.events[1]: "issue_comment.created" never matches a GitHub, Gitea or Forgejo event: they send issue_comment as the event type and created in the body\'s action — list issue_comment and add a filter {field: action, in: [created]}',
      '[webhook] config.yaml: platforms.webhook.routes.g.events[2]: "pull_request_review.submitted" never matches a GitHub, Gitea or Forgejo event: they send pull_request_review as the event type and submitted in the body\'s action — list pull_request_review and add a filter {field: action, in: [submitted]}',
    ]);
  });

  it("a GitLab object_kind (merge_request) is named with the event type GitLab sends (Merge Request Hook)", () => {
    expect(
      warnings({ gl: { events: ["merge_request", "tag_push", "Merge Request Hook", "push", "pipeline"] } }),
    ).toEqual([
      '[webhook] config.yaml: platforms.webhook.routes.gl.events[0]: "merge_request" is the object_kind of GitLab\'s body, not its event type: GitLab names the event in X-Gitlab-Event as "Merge Request Hook", so none of its events matches this entry — write "Merge Request Hook" (keep "merge_request" only for another sender that names its events so)',
      '[webhook] config.yaml: platforms.webhook.routes.gl.events[1]: "tag_push" is the object_kind of GitLab\'s body, not its event type: GitLab names the event in X-Gitlab-Event as "Tag Push Hook", so none of its events matches this entry — write "Tag Push Hook" (keep "tag_push" only for another sender that names its events so)',
      '[webhook] config.yaml: platforms.webhook.routes.gl.events[4]: "pipeline" is the object_kind of GitLab\'s body, not its event type: GitLab names the event in X-Gitlab-Event as "Pipeline Hook", so none of its events matches this entry — write "Pipeline Hook" (keep "pipeline" only for another sender that names its events so)',
    ]);
  });

  it("an events entry unknown (what an answer says of a request naming no event type) is named: such a request has none", () => {
    expect(warnings({ u: { events: ["unknown", "push"] } })).toEqual([
      '[webhook] config.yaml: platforms.webhook.routes.u.events[0]: "unknown" is what an answer says of a request that names no event type, which has none: an events list never accepts such a request (it is answered {"status":"ignored","event":"unknown"}) — leave events out for that sender, and select its requests with a filter on a body field',
    ]);
  });

  it("an events entry holding a comma (two types written as one) is named with the entries to write", () => {
    expect(
      warnings({ c: { events: ["push,issues", "pull_request, issue_comment", "Merge Request Hook"] } }),
    ).toEqual([
      '[webhook] config.yaml: platforms.webhook.routes.c.events[0]: "push,issues" never matches: events compares the whole event type, and no sender names one with a comma — write each type as an entry of its own: ["push", "issues"]',
      '[webhook] config.yaml: platforms.webhook.routes.c.events[1]: "pull_request, issue_comment" never matches: events compares the whole event type, and no sender names one with a comma — write each type as an entry of its own: ["pull_request", "issue_comment"]',
    ]);
  });

  it("a coalesce quiet window longer than the max wait (window_seconds: 600 with the default 300) is named", () => {
    expect(
      warnings({
        long: { coalesce: { key: "n", window_seconds: 600 } },
        swapped: { coalesce: { key: "n", window_seconds: 60, max_wait_seconds: 10 } },
        usual: { coalesce: { key: "n", window_seconds: 30 } },
        short: { coalesce: { key: "n", max_wait_seconds: 10 } },
      }),
    ).toEqual([
      "[webhook] config.yaml: platforms.webhook.routes.long: coalesce.window_seconds (600) has no effect while it is longer than coalesce.max_wait_seconds (300, the default) — every group fires at its max wait, counted from its first event; set max_wait_seconds above the quiet window, or shorten the window",
      "[webhook] config.yaml: platforms.webhook.routes.swapped: coalesce.window_seconds (60) has no effect while it is longer than coalesce.max_wait_seconds (10) — every group fires at its max wait, counted from its first event; set max_wait_seconds above the quiet window, or shorten the window",
      "[webhook] config.yaml: platforms.webhook.routes.short: coalesce.window_seconds (30, the default) has no effect while it is longer than coalesce.max_wait_seconds (10) — every group fires at its max wait, counted from its first event; set max_wait_seconds above the quiet window, or shorten the window",
    ]);
  });

  it("a quiet window as long as the max wait (also both past the 2,147,483 s a timer holds) is named; both 0 is not", () => {
    expect(
      warnings({
        equal: { coalesce: { key: "n", window_seconds: 300 } },
        explicit: { coalesce: { key: "n", window_seconds: 30, max_wait_seconds: 30 } },
        capped: { coalesce: { key: "n", window_seconds: 3_000_000, max_wait_seconds: 5_000_000 } },
        shorter: { coalesce: { key: "n", window_seconds: 2_000_000, max_wait_seconds: 5_000_000 } },
        zero: { coalesce: { key: "n", window_seconds: 0, max_wait_seconds: 0 } },
      }),
    ).toEqual([
      "[webhook] config.yaml: platforms.webhook.routes.equal: coalesce.window_seconds (300) has no effect while it is as long as coalesce.max_wait_seconds (300, the default) — every group fires at its max wait, counted from its first event; set max_wait_seconds above the quiet window, or shorten the window",
      "[webhook] config.yaml: platforms.webhook.routes.explicit: coalesce.window_seconds (30, the default) has no effect while it is as long as coalesce.max_wait_seconds (30) — every group fires at its max wait, counted from its first event; set max_wait_seconds above the quiet window, or shorten the window",
      "[webhook] config.yaml: platforms.webhook.routes.capped: coalesce.window_seconds (3000000, capped at 2147483) has no effect while it is as long as coalesce.max_wait_seconds (5000000, capped at 2147483) — every group fires at its max wait, counted from its first event; set max_wait_seconds above the quiet window, or shorten the window",
    ]);
  });

  it("a coalesce key on headers.<Name> (a filter's way to read a request header) is named: a key reads the payload only", () => {
    expect(
      warnings({
        bare: { coalesce: { key: "headers.X-Shop-Domain" } },
        template: { coalesce: { key: "{repo}#{ headers.X-GitHub-Event }" } },
        body: { coalesce: { key: "payload.headers.shop" } },
      }),
    ).toEqual([
      "[webhook] config.yaml: platforms.webhook.routes.bare: coalesce.key headers.X-Shop-Domain reads a field headers of the payload, not a request header (a key reads the payload only, as prompt templates do) — an event whose body has no such field runs at once, not grouped; key on a payload field",
      "[webhook] config.yaml: platforms.webhook.routes.template: coalesce.key {repo}#{ headers.X-GitHub-Event } reads a field headers of the payload, not a request header (a key reads the payload only, as prompt templates do) — an event whose body has no such field runs at once, not grouped; key on a payload field ({event_type} is the event type a header names)",
    ]);
  });

  it("deliver_extra and mirror_to_session on a log route are named; on a chat route they are not", () => {
    expect(
      warnings({
        a: { deliver_extra: { chat_id: "42" } },
        b: { mirror_to_session: true, deliver: "log" },
        c: { deliver: "telegram", deliver_extra: { chat_id: "42" }, mirror_to_session: true },
        d: { prompt: "plain" },
      }),
    ).toEqual([
      "[webhook] config.yaml: platforms.webhook.routes.a: deliver_extra has no effect while deliver is log (replies go to the gateway log) — set deliver to a target, e.g. deliver: telegram",
      "[webhook] config.yaml: platforms.webhook.routes.b: mirror_to_session has no effect while deliver is log (replies go to the gateway log) — set deliver to a target, e.g. deliver: telegram",
    ]);
  });

  it("a cron_job route's deliver, deliver_extra, skills and toolsets are named (the job's own apply); its mirror_to_session is not", () => {
    expect(
      warnings({
        j: {
          cron_job: "nightly",
          deliver: "slack",
          deliver_extra: { chat_id: "C1" },
          skills: ["triage"],
          toolsets: ["web"],
          mirror_to_session: true,
        },
        k: { cron_job: "nightly", mirror_to_session: true },
        // Bound to a named profile: its job is listed by that profile's svc cron list.
        w: { cron_job: "nightly", profile: "work", deliver: "slack" },
      }),
    ).toEqual([
      "[webhook] config.yaml: platforms.webhook.routes.j: deliver, deliver_extra, skills, toolsets have no effect on a cron_job route — job nightly runs with its own target, extras and toolsets, and no skill (svc cron list); remove them",
      "[webhook] config.yaml: platforms.webhook.routes.w: deliver has no effect on a cron_job route — job nightly runs with its own target, extras and toolsets, and no skill (svc cron list --profile work); remove it",
    ]);
  });

  it("a deliver_only route's skills and toolsets are named (no agent runs)", () => {
    expect(
      warnings({
        d: { deliver_only: true, deliver: "telegram", skills: ["tone"], toolsets: ["web"] },
        e: { deliver_only: true, deliver: "telegram" },
      }),
    ).toEqual([
      "[webhook] config.yaml: platforms.webhook.routes.d: skills, toolsets have no effect on a deliver_only route — no agent runs, the rendered prompt is the message; remove them",
    ]);
  });

  it("mirror_to_session with a target that is not a chat (email, sms, forge_comment) is named", () => {
    expect(
      warnings({
        m: { deliver: "email", mirror_to_session: true, deliver_extra: { to: "a@b.c" } },
        n: { deliver: "chat_1", mirror_to_session: true },
      }),
    ).toEqual([
      "[webhook] config.yaml: platforms.webhook.routes.m: mirror_to_session has no effect with deliver: email — only chat deliveries are mirrored into a chat's session; remove it",
    ]);
  });
});
