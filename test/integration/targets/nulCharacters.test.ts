import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { message, recordedRetries, registryFor } from "./support.js";

/**
 * JSON lets a payload carry a NUL (`"\u0000"`). Mattermost keeps posts in PostgreSQL, which cannot store
 * one: a post holding it is answered HTTP 500 "We couldn't save the Post" (mattermost/mattermost#28280),
 * every retry alike, and the message is lost. It is delivered with U+FFFD in its place.
 */
let mattermost: FakeApi;
beforeAll(async () => {
  mattermost = await startFakeApi((r) => {
    const post = r.json as { message?: string };
    if (post.message?.includes("\0"))
      return {
        status: 500,
        json: {
          id: "app.post.save.app_error",
          message: "We couldn't save the Post.",
          detailed_error: 'pq: invalid byte sequence for encoding "UTF8": 0x00',
          status_code: 500,
        },
      };
    return { status: 201, json: { id: "p1", message: post.message } };
  });
});
afterAll(() => mattermost.close());

describe("a NUL in payload text", () => {
  it("is delivered as U+FFFD, at the first attempt", async () => {
    const registry = registryFor({
      mattermost: { enabled: true, token: "M", base_url: mattermost.url, home_channel: "town" },
    });
    const { waits, runStep } = recordedRetries();
    await registry.get("mattermost")?.send(message("build \0 log\0"), undefined, { runStep });
    expect(waits).toEqual([]);
    expect(mattermost.requests.map((r) => (r.json as { message: string }).message)).toEqual([
      "build \ufffd log\ufffd",
    ]);
  });
});
