import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeliveryError } from "../../../src/io/targets/target.js";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { message, recordedRetries, registryFor } from "./support.js";

/**
 * signal-cli-rest-api answers a send that Signal rate-limited with a captcha challenge as 429
 * `{"error", "challenge_tokens", "account"}`. No retry lifts it (a person must solve the captcha), and
 * the message may have gone out anyway (bbernhard/signal-cli-rest-api#881): the delivery fails at once.
 */
let fake: FakeApi;
beforeAll(async () => {
  fake = await startFakeApi();
});
afterAll(() => fake.close());

const CHALLENGE = {
  status: 429,
  json: {
    error:
      "Failed to send message due to rate limiting. Use the attached challenge tokens to lift the rate limit restrictions via the '/v1/accounts/{number}/rate-limit-challenge' endpoint.",
    challenge_tokens: ["ae19341a-839a-4b9a-9019-863775ae2630"],
    account: "+15550001111",
  },
};

describe("signal: a captcha challenge (429 with challenge_tokens)", () => {
  it("is not retried in agent mode and says how to lift it", async () => {
    const signal = registryFor({ signal: { enabled: true, number: "+15550001111", base_url: fake.url } });
    fake.setHandler(() => CHALLENGE);
    const { waits, runStep } = recordedRetries();
    const error = await signal
      .get("signal")
      ?.send(message("hi", { chat_id: "+15550002222" }), undefined, { runStep })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeliveryError);
    expect((error as DeliveryError).transient).toBe(false);
    expect((error as DeliveryError).message).toMatch(
      /^signal: send: HTTP 429 — Failed to send message due to rate limiting\. .* — not retried: Signal asks for a captcha before \+15550001111 sends more/,
    );
    expect((error as DeliveryError).message).toContain(
      '{"challenge_token": "ae19341a-839a-4b9a-9019-863775ae2630", "captcha": "<the signalcaptcha:// link>"} to /v1/accounts/%2B15550001111/rate-limit-challenge',
    );
    expect(waits).toEqual([]);
    expect(fake.requests.filter((r) => r.path === "/v2/send")).toHaveLength(1);
  });

  it("a 429 without challenge tokens is still a rate limit that is retried", async () => {
    fake.requests.length = 0;
    const signal = registryFor({ signal: { enabled: true, number: "+15550001111", base_url: fake.url } });
    fake.enqueue(
      { status: 429, json: { error: "Rate limit exceeded" } },
      { status: 201, json: { timestamp: "1" } },
    );
    const { waits, runStep } = recordedRetries();
    await signal.get("signal")?.send(message("hi", { chat_id: "+15550002222" }), undefined, { runStep });
    expect(waits).toEqual([1000]);
    expect(fake.requests.filter((r) => r.path === "/v2/send")).toHaveLength(2);
  });
});

describe("signal: long texts", () => {
  it("splits at 2000 UTF-8 bytes, as Signal measures a message body (a CJK character is 3)", async () => {
    fake.requests.length = 0;
    fake.setHandler(() => ({ status: 201, json: { timestamp: "1" } }));
    const signal = registryFor({ signal: { enabled: true, number: "+15550001111", base_url: fake.url } });
    const text = "漢字".repeat(1000);
    const receipt = await signal.get("signal")?.send(message(text, { chat_id: "+15550002222" }));
    const bodies = fake.requests.map((r) => (r.json as { message: string }).message);
    expect(bodies.map((b) => Buffer.byteLength(b))).toEqual([1998, 1998, 1998, 6]);
    expect(bodies.join("")).toBe(text);
    expect(receipt?.parts).toBe(4);
  });
});
