import { describe, expect, it } from "vitest";
import { isPingEvent, resolveEventType } from "../../../src/streams/eventType.js";
import { githubExample } from "../../helpers/githubExamples.js";

describe("resolveEventType (spec 2.2, 6)", () => {
  it("prefers x-forge-event, then x-github-event, x-alt-forge-event, x-gitlab-event, then body event_type", () => {
    const all = {
      "x-forge-event": "a",
      "x-github-event": "b",
      "x-alt-forge-event": "c",
      "x-gitlab-event": "d",
    };
    const body = { event_type: "e" };
    expect(resolveEventType(all, body)).toBe("a");
    const { "x-forge-event": _a, ...rest1 } = all;
    expect(resolveEventType(rest1, body)).toBe("b");
    const { "x-github-event": _b, ...rest2 } = rest1;
    expect(resolveEventType(rest2, body)).toBe("c");
    const { "x-alt-forge-event": _c, ...rest3 } = rest2;
    expect(resolveEventType(rest3, body)).toBe("d");
    expect(resolveEventType({}, body)).toBe("e");
  });

  it("falls back to the body's top-level type (Standard Webhooks, Svix, Stripe), after event_type", () => {
    expect(resolveEventType({}, { type: "invoice.paid", data: {} })).toBe("invoice.paid");
    expect(resolveEventType({}, { event_type: "e", type: "t" })).toBe("e");
    expect(resolveEventType({ "x-github-event": "push" }, { type: "t" })).toBe("push");
    expect(resolveEventType({}, { type: 3 })).toBeUndefined();
    expect(resolveEventType({}, { type: "" })).toBeUndefined();
  });

  it("then Jira's webhookEvent, after event_type and type", () => {
    expect(resolveEventType({}, { webhookEvent: "jira:issue_created", issue: {} })).toBe(
      "jira:issue_created",
    );
    expect(resolveEventType({}, { type: "t", webhookEvent: "w" })).toBe("t");
    expect(resolveEventType({ "x-event-key": "k" }, { webhookEvent: "w" })).toBe("k");
  });

  it("then Azure DevOps' eventType, last", () => {
    expect(resolveEventType({}, { eventType: "git.push", resource: {} })).toBe("git.push");
    expect(resolveEventType({}, { webhookEvent: "w", eventType: "e" })).toBe("w");
  });

  it("returns the value verbatim: no case folding or trimming", () => {
    expect(resolveEventType({ "x-gitlab-event": "Merge Request Hook" }, {})).toBe("Merge Request Hook");
    expect(resolveEventType({ "x-github-event": "Pull_Request " }, {})).toBe("Pull_Request ");
  });

  it("skips empty headers and ignores non-string or nested event_type", () => {
    expect(resolveEventType({ "x-forge-event": "", "x-gitlab-event": "Push Hook" }, {})).toBe("Push Hook");
    expect(resolveEventType({}, { event_type: 5 })).toBeUndefined();
    expect(resolveEventType({}, { payload: { event_type: "inner" } })).toBeUndefined();
    expect(resolveEventType({}, ["event_type"])).toBeUndefined();
    expect(resolveEventType({}, null)).toBeUndefined();
  });

  it("resolves GitHub's real ping delivery as a ping event", () => {
    const ping = githubExample("ping");
    const event = resolveEventType({ "x-github-event": "ping" }, ping);
    expect(isPingEvent(event)).toBe(true);
  });
});

describe("isPingEvent", () => {
  it("is exactly 'ping', or Bitbucket Data Center's 'diagnostics:ping'", () => {
    expect(isPingEvent("ping")).toBe(true);
    expect(isPingEvent("diagnostics:ping")).toBe(true);
    for (const other of ["Ping", "ping ", "System Hook", "push", "diagnostics:Ping", "pagey.ping", undefined])
      expect(isPingEvent(other)).toBe(false);
  });
});
