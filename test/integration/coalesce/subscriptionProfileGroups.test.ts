import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { signGenericV2 } from "../../../src/cli/webhook.js";
import {
  gatewayPerTest,
  RECORDER_AGENT,
  recorderAgent,
  waitForRun,
  webhookConfig,
} from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * docs/coalescing-and-cron.md: a group holds only events accepted under one profile. A subscription moved
 * to another profile (`svc webhook subscribe --route-profile`, or its record edited) is served without a
 * reload, so no flush comes between: an event the group accepted for the old profile runs as that profile,
 * and the new profile's event for the same key opens a group of its own.
 */

const perTest = gatewayPerTest();
const live = perTest.live;
const SECRET = "subscription-secret";
const subscription = (profile: string) =>
  JSON.stringify({
    s1: {
      secret: SECRET,
      prompt: "{n}",
      enabled: true,
      profile,
      coalesce: { key: "{k}", window_seconds: 20 },
    },
  });
const post = (profile: string, id: string, n: string) => {
  const body = JSON.stringify({ k: "1", n });
  return postJson(live().url(`/p/${profile}/webhooks/s1`), body, {
    ...signGenericV2(SECRET, body, Math.floor(live().clock.now() / 1000)),
    "x-request-id": id,
  });
};
const replyProfile = (id: string) =>
  live()
    .logs()
    .find((l) => l.delivery_id === id && l.msg.includes(" reply:"))?.profile;

describe("a coalescing subscription moved to another profile while a group waits", {
  timeout: 30_000,
}, () => {
  it("the old profile's event runs as the old profile, the new one's as the new: two groups, neither superseded", async () => {
    const gw = await perTest.start({
      fakeTimers: true,
      files: {
        "agent/recorder.sh": RECORDER_AGENT,
        "profiles/alpha/.env": "",
        "profiles/beta/.env": "",
        "webhook_subscriptions.json": subscription("alpha"),
      },
      config: webhookConfig(
        {},
        { rate_limit: 1000 },
        { gateway: { multiplex_profiles: true }, agent: recorderAgent() },
      ),
    });
    expect(await post("alpha", "a1", "from-alpha")).toMatchObject({
      status: 202,
      body: { status: "coalesced" },
    });
    writeFileSync(join(gw.home.dir, "webhook_subscriptions.json"), subscription("beta"));
    expect(await post("alpha", "a2", "late-alpha")).toMatchObject({ status: 404 });
    expect(await post("beta", "b1", "from-beta")).toMatchObject({
      status: 202,
      body: { status: "coalesced" },
    });
    gw.clock.advance(20_000);
    expect((await waitForRun(gw, "a1")).prompt).toBe("from-alpha");
    expect((await waitForRun(gw, "b1")).prompt).toBe("from-beta");
    await expect.poll(() => replyProfile("a1"), { timeout: 10_000 }).toBe("alpha");
    await expect.poll(() => replyProfile("b1"), { timeout: 10_000 }).toBe("beta");
    const dispatched = gw.logs().filter((l) => l.msg.includes("coalesced group dispatched"));
    expect(dispatched.map((l) => [l.delivery_id, l.superseded]).sort()).toEqual([
      ["a1", 0],
      ["b1", 0],
    ]);
  });
});
