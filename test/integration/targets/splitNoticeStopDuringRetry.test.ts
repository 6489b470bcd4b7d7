import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createdMessages, sentContents, startFakeDiscord } from "../../fakes/discord.js";
import { type FakeModel, startFakeOpenAI } from "../../fakes/openaiServer.js";
import { startGatewayInHome, startTestGateway, stopPastDrain, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { journalLines } from "../../helpers/runJournal.js";

/**
 * docs/delivery-targets.md ("Retries"), with state.backend: local: a failed model run's notice split into
 * parts is delivered as a reply is. A stop whose drain ends while its 2nd part waits to retry (the 1st one
 * delivered) cuts the delivery short: the run did not finish — it is not journaled, counted or logged failed
 * — and is saved with its notice and where its delivery stood. The next start delivers the notice from its
 * 2nd part without asking the model again, then logs and journals the run failed, as it would have been.
 */
const OPEN = "INSECURE_NO_AUTH";
const CHANNEL = "4242";
let model: FakeModel;

beforeAll(async () => {
  model = await startFakeOpenAI();
});
afterAll(() => model.close());

describe("state.backend: local — a stop while the 2nd part of a failed run's notice waits to retry", () => {
  it("keeps the run with its notice, which the next start sends on from its 2nd part", async () => {
    // One message a minute on the channel's bucket, on a clock that stands still until the restart: the 2nd
    // part draws a 429. From the restart on, each message comes a minute after the one before.
    let bucketNow = 0;
    let restarted = false;
    const discord = await startFakeDiscord("D", {
      bucket: {
        limit: 1,
        windowMs: 60_000,
        now: () => {
          if (restarted) bucketNow += 60_000;
          return bucketNow;
        },
      },
    });
    // The notice names the endpoint's URL: one this long makes it two Discord messages (2000 characters each).
    const path = "p".repeat(2500);
    const refusal = { status: 401, body: JSON.stringify({ error: { message: "key rejected" } }) };
    model.script(refusal, refusal);
    const gw = await startTestGateway({
      fakeSleeps: true,
      drainTimeoutMs: 1000,
      config: webhookConfig(
        {
          ci: { secret: OPEN, prompt: "build {n}", deliver: "discord", deliver_extra: { chat_id: CHANNEL } },
        },
        { rate_limit: 1000 },
        {
          agent: {
            provider: "openai",
            model: "m",
            base_url: `${model.baseUrl}/${path}`,
            api_key: "k",
            retries: 0,
          },
          platforms: { discord: { enabled: true, token: "D", base_url: discord.url } },
        },
      ),
    });
    try {
      const res = await postJson(gw.url("/webhooks/ci"), { n: 7 }, { "X-Request-ID": "split-stop-1" });
      expect(res.status).toBe(202);
      await vi.waitFor(() => expect(gw.logs().some((l) => l.msg.includes("retry 1/3 in"))).toBe(true), {
        timeout: 10_000,
        interval: 10,
      });
      await stopPastDrain(gw);
      const [first, second] = sentContents(discord);
      expect(first).toMatch(/^⚠️ Agent run failed: model endpoint /);
      // Split at the space before the URL.
      expect(second).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1\/p/);
      expect(createdMessages(discord).map((m) => m.content)).toEqual([first]);
      const messages = gw.logs().map((l) => l.msg);
      expect(messages).toContain(
        "[delivery] discord: route ci: not delivered — the gateway stopped while the delivery was under way (not counted as failed)",
      );
      expect(messages).not.toContain("[webhook] ci: agent run failed");
      expect(journalLines(gw.home.dir)).toEqual([]);

      // The next start, its wall clock past the retry's due time, sends the notice on from its 2nd part.
      restarted = true;
      const again = await startGatewayInHome(gw.home, 300, () => Date.now() + 120_000);
      try {
        await vi.waitFor(() => expect(createdMessages(discord)).toHaveLength(2), {
          timeout: 10_000,
          interval: 20,
        });
      } finally {
        await again.stop();
      }
      expect(gw.logs().map((l) => l.msg)).toContain(
        "[state] 1 agent run(s) left unfinished at the last shutdown queued again (from the journal)",
      );
      expect(gw.logs().map((l) => l.msg)).toContain(
        "[delivery] discord: route ci: handed on — goes on now (part 2; part 1 was delivered)",
      );
      expect(gw.logs().map((l) => l.msg)).toContain("[webhook] ci: agent run failed");
      expect(model.requests).toHaveLength(1);
      expect(sentContents(discord)).toEqual([first, second, second]);
      expect(createdMessages(discord).map((m) => m.content)).toEqual([first, second]);
      expect(journalLines(gw.home.dir)).toEqual([
        expect.objectContaining({
          key: "webhook:ci:split-stop-1",
          run: expect.objectContaining({ outcome: "error" }),
        }),
      ]);
    } finally {
      gw.home.cleanup();
      await discord.close();
    }
  });
});
