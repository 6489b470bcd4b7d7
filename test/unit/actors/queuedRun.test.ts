import { describe, expect, it } from "vitest";
import { queuedRun } from "../../../src/actors/runs.js";
import type { AcceptedEvent, PipelineCtx } from "../../../src/streams/context.js";
import { acceptEvent } from "../../../src/streams/stages/accept.js";

/** What `queuedRun` must give: the event without its payload and headers (an object rest). */
function restOf(event: AcceptedEvent): unknown {
  const { payload: _payload, headers: _headers, ...run } = event;
  return run;
}

const ctx = {
  inbound: { headers: { "x-github-event": "pull_request" }, receivedAt: 1_700_000_000_000, receivedTick: 42 },
  route: {
    name: "pr",
    profile: "default",
    secret: "s",
    route: { prompt: "PR #{number}", deliver_extra: { repo: "{repository}" } },
  },
  event: "pull_request",
  deliveryId: "d-1",
  payload: { number: 7, repository: "octo/hello" },
} as unknown as PipelineCtx;

describe("queuedRun", () => {
  it("a request's event (the accept stage's) gives the same keys, values and order as the rest of it", () => {
    const event = acceptEvent(ctx);
    const run = queuedRun(event);
    expect(run).toStrictEqual(restOf(event));
    expect(Object.keys(run)).toEqual(Object.keys(restOf(event) as object));
  });

  it("an event of another shape keeps every key but the payload and headers (a cron fire's job, no tick)", () => {
    const { receivedTick: _tick, ...event } = acceptEvent(ctx);
    const fired = { ...event, cronJob: "nightly" } as AcceptedEvent;
    expect(queuedRun(fired)).toStrictEqual(restOf(fired));
    const extended = { ...acceptEvent(ctx), later: 1 } as AcceptedEvent;
    expect(queuedRun(extended)).toStrictEqual(restOf(extended));
  });
});
