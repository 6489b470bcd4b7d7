import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDeliverer } from "../../../src/actors/deliver.js";
import { svcPaths } from "../../../src/config/paths.js";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { tempHome } from "../../helpers/home.js";
import { message, registryFor } from "./support.js";

/**
 * Slack answers many refusals with HTTP 200 and `ok: false`; among its error codes `ratelimited`,
 * `service_unavailable`, `internal_error`, `request_timeout` (the POST data arrived truncated) and
 * `team_added_to_org` (a workspace migration makes the API intermittently unavailable) mean "try again
 * later" (api.slack.com/methods/chat.postMessage, Errors). Agent-mode deliveries retry those (waiting a Retry-After when Slack sends one); any other
 * code (`channel_not_found`, `not_in_channel`, ...) is final.
 */
let slack: FakeApi;
beforeAll(async () => {
  slack = await startFakeApi(() => ({ json: { ok: true, channel: "C1", ts: "1.1" } }));
});
afterAll(() => slack.close());

function deliverer() {
  const sleeps: number[] = [];
  const home = tempHome();
  const d = createDeliverer({
    targets: registryFor({
      slack: { enabled: true, token: "xoxb-1", base_url: slack.url, home_channel: "C1" },
    }),
    logger: captureLogger().logger,
    paths: svcPaths(home.dir),
    sleep: async (ms) => {
      sleeps.push(ms);
    },
  });
  const deliver = () =>
    d.deliver({ target: "slack", message: message("hi"), mode: "agent", mirrorToSession: false });
  return { deliver, sleeps, cleanup: home.cleanup };
}

const posts = () => slack.requests.filter((r) => r.path === "/api/chat.postMessage").length;

describe("slack: ok:false error codes", () => {
  it.each(["service_unavailable", "internal_error", "request_timeout", "team_added_to_org"])(
    "%s is retried with backoff",
    async (error) => {
      const { deliver, sleeps, cleanup } = deliverer();
      const before = posts();
      slack.enqueue({ json: { ok: false, error } });
      await deliver();
      expect(sleeps).toEqual([1000]);
      expect(posts() - before).toBe(2);
      cleanup();
    },
  );

  it("ratelimited waits the Retry-After header", async () => {
    const { deliver, sleeps, cleanup } = deliverer();
    slack.enqueue({ headers: { "retry-after": "3" }, json: { ok: false, error: "ratelimited" } });
    await deliver();
    expect(sleeps).toEqual([3000]);
    cleanup();
  });

  it("channel_not_found is final", async () => {
    const { deliver, sleeps, cleanup } = deliverer();
    slack.enqueue({ json: { ok: false, error: "channel_not_found" } });
    await expect(deliver()).rejects.toThrow(/channel_not_found/);
    expect(sleeps).toEqual([]);
    cleanup();
  });
});
