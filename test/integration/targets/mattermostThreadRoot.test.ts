import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configSchema } from "../../../src/config/schema.js";
import { GONE_THREADS_KEPT } from "../../../src/io/targets/chat.js";
import { createTargets } from "../../../src/io/targets/registry.js";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { message } from "./support.js";

/**
 * A Mattermost thread whose first post was deleted: the API refuses a post naming it as root_id with 400
 * `api.post.create_post.root_id.app_error` ("Invalid RootId parameter."). The message goes to the channel
 * itself instead of being lost, and the operator is told once which key to fix.
 */
let api: FakeApi;
beforeAll(async () => {
  api = await startFakeApi((r) => {
    const post = r.json as { root_id?: string } | undefined;
    if (post?.root_id === "gone" || post?.root_id?.startsWith("gone-"))
      return {
        status: 400,
        json: {
          id: "api.post.create_post.root_id.app_error",
          message: "Invalid RootId parameter.",
          status_code: 400,
        },
      };
    if (post?.root_id === "forbidden")
      return {
        status: 403,
        json: {
          id: "api.context.permissions.app_error",
          message: "You do not have the appropriate permissions.",
        },
      };
    return { status: 201, json: { id: "p1" } };
  });
});
afterAll(() => api.close());

function mattermost() {
  const log = captureLogger();
  const config = configSchema.parse({
    platforms: { mattermost: { enabled: true, token: "MM", base_url: api.url, home_channel: "town" } },
  });
  return { log, target: createTargets(config, { logger: log.logger }).get("mattermost") };
}

describe("mattermost: a thread whose first post was deleted", () => {
  it("posts to the channel itself, warns once, and does not name that root again", async () => {
    api.requests.length = 0;
    const { log, target } = mattermost();
    await target?.send(message("first", { thread_id: "gone" }));
    await target?.send(message("second", { thread_id: "gone" }));
    await target?.send(message("live", { thread_id: "root1" }));
    // Without pending_post_id (the same key on every attempt of a part: idempotentParts.test.ts).
    const posts = api.requests.map((r) => {
      const { pending_post_id: _key, ...post } = r.json as Record<string, unknown>;
      return post;
    });
    expect(posts).toEqual([
      { channel_id: "town", message: "first", root_id: "gone" },
      { channel_id: "town", message: "first" },
      { channel_id: "town", message: "second" },
      { channel_id: "town", message: "live", root_id: "root1" },
    ]);
    expect(log.messages().filter((m) => m.includes("was not found"))).toEqual([
      '[delivery] mattermost: thread gone was not found in channel town (its first post deleted, or another channel\'s); posting to the channel itself — fix deliver_extra.thread_id (or message_thread_id) of route "alerts"',
    ]);
  });

  it("the roots remembered as gone are bounded: a flood of rendered thread ids does not grow them for ever", async () => {
    // `thread_id: "{thread}"` renders the sender's value; at most GONE_THREADS_KEPT are remembered.
    const { log, target } = mattermost();
    for (let n = 0; n <= GONE_THREADS_KEPT; n++) await target?.send(message("x", { thread_id: `gone-${n}` }));
    expect(log.messages().filter((m) => m.includes("was not found"))).toHaveLength(GONE_THREADS_KEPT + 1);
    // The first root was forgotten with the others: it is named again (and refused, and warned about, again).
    api.requests.length = 0;
    await target?.send(message("again", { thread_id: "gone-0" }));
    expect(api.requests.map((r) => (r.json as { root_id?: string }).root_id)).toEqual(["gone-0", undefined]);
  });

  it("another refusal of a post in a thread still fails the delivery", async () => {
    const { target } = mattermost();
    await expect(target?.send(message("x", { thread_id: "forbidden" }))).rejects.toThrow(
      "mattermost: create post: HTTP 403 — You do not have the appropriate permissions.",
    );
  });
});
