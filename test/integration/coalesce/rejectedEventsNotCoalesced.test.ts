import { sign } from "@octokit/webhooks-methods";
import { describe, expect, it } from "vitest";
import { coalesceNote } from "../../../src/actors/coalescer.js";
import {
  gatewayPerTest,
  RECORDER_AGENT,
  recorderAgent,
  waitForRun,
  webhookConfig,
} from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * Spec 3.1 with 4.2: only an event that passed every earlier stage reaches its group. One ignored by the
 * events list, a filter, a bad signature or the rate limit neither replaces the pending event nor counts.
 */

const perTest = gatewayPerTest();
const live = perTest.live;
const SECRET = "coalesce-secret";
const send = async (id: string, body: Record<string, unknown>, event = "pull_request", secret = SECRET) => {
  const text = JSON.stringify(body);
  return postJson(live().url("/webhooks/pr"), text, {
    "X-Hub-Signature-256": await sign(secret, text),
    "X-Forge-Event": event,
    "X-Forge-Delivery": id,
  });
};
const dispatched = () =>
  live()
    .logs()
    .filter((l) => l.msg.endsWith("coalesced group dispatched"))
    .map((l) => ({ id: l.delivery_id, superseded: l.superseded }));

describe("events refused before coalescing do not touch the pending group", () => {
  it("events list, filter, signature and rate limit: the group keeps its latest accepted event and count", async () => {
    await perTest.start({
      fakeTimers: true,
      files: { "agent/recorder.sh": RECORDER_AGENT },
      config: webhookConfig(
        {
          pr: {
            secret: SECRET,
            events: ["pull_request"],
            filters: [{ field: "action", not_equals: "closed" }],
            prompt: "PR {n} {action}",
            coalesce: { key: "n" },
          },
        },
        { rate_limit: 6 },
        { agent: recorderAgent() },
      ),
    });
    expect((await send("a1", { n: 1, action: "opened" })).body).toEqual({ status: "coalesced" });
    expect((await send("a2", { n: 1, action: "pushed" }, "push")).body).toEqual({
      status: "ignored",
      event: "push",
    });
    expect((await send("a3", { n: 1, action: "closed" })).body).toEqual({
      status: "ignored",
      reason: "filter",
    });
    expect((await send("a4", { n: 1, action: "forged" }, "pull_request", "wrong")).status).toBe(401);
    live().clock.advance(20_000);
    expect((await send("a5", { n: 1, action: "edited" })).body).toEqual({ status: "coalesced" });
    // The window's sixth request (the bad signature counted too) is the rate limit's last; the seventh is refused.
    expect((await send("a6", { n: 1, action: "labeled" })).body).toEqual({ status: "coalesced" });
    expect((await send("a7", { n: 1, action: "late" })).status).toBe(429);
    // The quiet window restarted with a6 only (at 20 s), not with any refused event.
    live().clock.advance(29_999);
    expect(dispatched()).toEqual([]);
    live().clock.advance(1);
    expect(dispatched()).toEqual([{ id: "a6", superseded: 2 }]);
    expect((await waitForRun(live(), "a6")).prompt).toBe(`${coalesceNote(2)}\n\nPR 1 labeled`);
  });
});
