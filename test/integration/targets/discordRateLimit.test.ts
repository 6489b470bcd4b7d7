import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDeliverer } from "../../../src/actors/deliver.js";
import { svcPaths } from "../../../src/config/paths.js";
import { sentContents, startFakeDiscord } from "../../fakes/discord.js";
import type { FakeApi } from "../../fakes/httpFake.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { tempHome } from "../../helpers/home.js";
import { message, registryFor } from "./support.js";

/**
 * Discord lets a bot post a few messages per channel per window (5 per 5 s) and says so in every answer
 * (`X-RateLimit-Remaining`, `X-RateLimit-Reset-After`). A long reply split into more parts than that
 * must wait for the bucket, not run into a 429: a direct delivery makes one attempt, so the 429 would cut
 * the message off and answer 502 after half of it was posted.
 */
let discord: FakeApi;
beforeAll(async () => {
  discord = await startFakeDiscord("D", { bucket: { limit: 3, windowMs: 600 } });
});
afterAll(() => discord.close());

describe("discord: a reply of more parts than the channel's rate-limit bucket", () => {
  it("is delivered whole in direct mode: each part after an empty bucket waits for its reset", async () => {
    const home = tempHome();
    const deliverer = createDeliverer({
      targets: registryFor({ discord: { enabled: true, token: "D", base_url: discord.url } }),
      logger: captureLogger().logger,
      paths: svcPaths(home.dir),
    });
    const text = Array.from({ length: 7 }, (_, i) => `${i}`.repeat(1990)).join("\n");
    const receipt = await deliverer.deliver({
      target: "discord",
      message: message(text, { chat_id: "777" }),
      mode: "direct",
      mirrorToSession: false,
    });
    expect(receipt.parts).toBe(7);
    expect(discord.requests.filter((r) => r.method === "POST")).toHaveLength(7);
    expect(sentContents(discord).join("")).toBe(text);
    home.cleanup();
  });
});
