import { APICallError, generateText, streamText } from "ai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { describeModelError } from "../../../src/agent/modelError.js";
import { languageModel } from "../../../src/agent/provider.js";
import {
  isRetryable,
  MAX_RETRY_WAIT_MS,
  retryDelayMs,
  type Sleep,
  withRetryPolicy,
} from "../../../src/agent/retry.js";
import { startFakeAnthropic } from "../../fakes/anthropicServer.js";
import { type FakeModel, startFakeOpenAI } from "../../fakes/openaiServer.js";

const apiError = (headers?: Record<string, string>) =>
  new APICallError({
    message: "busy",
    url: "http://x/v1/chat/completions",
    requestBodyValues: {},
    statusCode: 429,
    ...(headers === undefined ? {} : { responseHeaders: headers }),
  });

describe("retryDelayMs", () => {
  it("honours Retry-After in seconds and as an HTTP date, and retry-after-ms", () => {
    expect(retryDelayMs(apiError({ "retry-after": "7" }), 0)).toBe(7000);
    const now = Date.parse("2026-11-28T00:00:00Z");
    expect(retryDelayMs(apiError({ "retry-after": "Sat, 28 Nov 2026 00:00:03 GMT" }), 0, () => now)).toBe(
      3000,
    );
    expect(retryDelayMs(apiError({ "retry-after-ms": "250" }), 0)).toBe(250);
  });

  it("reads an asctime Retry-After (no zone written) as GMT, whatever the machine's time zone", () => {
    const now = Date.parse("1994-11-06T08:49:07Z");
    const zone = process.env.TZ;
    process.env.TZ = "America/New_York";
    try {
      expect(retryDelayMs(apiError({ "retry-after": "Sun Nov  6 08:49:37 1994" }), 0, () => now)).toBe(
        30_000,
      );
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });

  it("backs off 1 s, 2 s, 4 s without a header, and never waits more than a minute", () => {
    expect([0, 1, 2].map((attempt) => retryDelayMs(apiError(), attempt))).toEqual([1000, 2000, 4000]);
    expect(retryDelayMs(apiError({ "retry-after": "3600" }), 0)).toBe(MAX_RETRY_WAIT_MS);
    expect(retryDelayMs(apiError(), 20)).toBe(MAX_RETRY_WAIT_MS);
  });

  it("a Retry-After that is neither seconds nor a date (empty, signed, not a number) gets the backoff, not an immediate retry", () => {
    for (const value of ["", " ", "-5", "0x10", "soon"])
      expect(retryDelayMs(apiError({ "retry-after": value }), 1), JSON.stringify(value)).toBe(2000);
    expect(retryDelayMs(apiError({ "retry-after-ms": "", "retry-after": "3" }), 0)).toBe(3000);
    expect(retryDelayMs(apiError({ "retry-after-ms": "-100" }), 0)).toBe(1000);
    expect(retryDelayMs(apiError({ "retry-after": "1.5" }), 0)).toBe(1500);
    expect(retryDelayMs(apiError({ "retry-after": "0" }), 0)).toBe(0);
  });
});

describe("isRetryable", () => {
  const answered = (statusCode: number, headers: Record<string, string>) =>
    new APICallError({
      message: "refused",
      url: "http://x/v1/chat/completions",
      requestBodyValues: {},
      statusCode,
      responseHeaders: headers,
    });

  it("an answer's x-should-retry decides over its status, as the providers' own SDKs have it", () => {
    expect(isRetryable(answered(429, {}))).toBe(true);
    expect(isRetryable(answered(429, { "x-should-retry": "false" }))).toBe(false);
    expect(isRetryable(answered(503, { "X-Should-Retry": " FALSE " }))).toBe(false);
    expect(isRetryable(answered(400, {}))).toBe(false);
    expect(isRetryable(answered(400, { "x-should-retry": "true" }))).toBe(true);
    expect(isRetryable(answered(500, { "x-should-retry": "maybe" }))).toBe(true);
  });
});

describe("withRetryPolicy against a scripted Chat Completions server", () => {
  let model: FakeModel;
  let waits: number[];
  const sleep: Sleep = async (ms) => {
    waits.push(ms);
  };
  const chatModel = (retries: number) =>
    withRetryPolicy(languageModel({ provider: "openai", model: "m", base_url: model.baseUrl }), {
      retries,
      sleep,
    });
  beforeAll(async () => {
    model = await startFakeOpenAI();
  });
  afterAll(() => model.close());
  beforeEach(() => {
    waits = [];
    model.requests.length = 0;
  });

  it("retries 429 after its Retry-After and a 503 after the backoff, with the injected sleep", async () => {
    model.script({ status: 429, headers: { "retry-after": "7" } }, { status: 503 }, { text: "third time" });
    const result = await generateText({ model: chatModel(2), prompt: "hi", maxRetries: 0 });
    expect(result.text).toBe("third time");
    expect(waits).toEqual([7000, 2000]);
    expect(model.requests).toHaveLength(3);
  });

  it("gives up after `retries` and throws the endpoint's error; a 400 is not retried", async () => {
    model.script({ status: 500 }, { status: 500 });
    await expect(generateText({ model: chatModel(1), prompt: "hi", maxRetries: 0 })).rejects.toMatchObject({
      statusCode: 500,
    });
    expect(waits).toEqual([1000]);
    model.script({ status: 400 });
    waits = [];
    await expect(generateText({ model: chatModel(3), prompt: "hi", maxRetries: 0 })).rejects.toMatchObject({
      statusCode: 400,
    });
    expect(waits).toEqual([]);
  });

  it("Groq's 400 for a tool call its model wrote malformed (tool_use_failed) is retried: another generation may pass", async () => {
    const failed = JSON.stringify({
      error: {
        message:
          "Failed to call a function. Please adjust your prompt. See 'failed_generation' for more details.",
        type: "invalid_request_error",
        code: "tool_use_failed",
        failed_generation: '<function=lookup{"key": "a"}</function>',
      },
    });
    model.script({ status: 400, body: failed }, { text: "second time" });
    const result = await generateText({ model: chatModel(2), prompt: "hi", maxRetries: 0 });
    expect(result.text).toBe("second time");
    expect(waits).toEqual([1000]);
    expect(model.requests).toHaveLength(2);
  });

  it("a base_url on a port fetch refuses (6000) is not retried, and the error says why and what to do", async () => {
    const blocked = withRetryPolicy(
      languageModel({ provider: "openai", model: "m", base_url: "http://127.0.0.1:6000/v1" }),
      { retries: 3, sleep },
    );
    const error = await generateText({ model: blocked, prompt: "hi", maxRetries: 0 }).catch((e) => e);
    expect(waits).toEqual([]);
    expect(describeModelError(error, [])).toBe(
      "model endpoint http://127.0.0.1:6000/v1/chat/completions was not called: its port is one HTTP clients refuse (the Fetch standard's blocked ports, such as 6000, 6665-6669 and 10080) — serve the model on another port, or put a proxy in front, and set agent.base_url to it",
    );
  });

  it("retries a streamed call too, and the fake streams text and tool calls as SSE", async () => {
    model.script(
      { status: 429, headers: { "retry-after": "1" } },
      {
        text: "streamed",
        toolCalls: [{ name: "t", args: { a: 1 } }],
      },
    );
    const result = streamText({ model: chatModel(1), prompt: "hi", maxRetries: 0 });
    expect(await result.text).toBe("streamed");
    expect((await result.toolCalls).map((c) => [c.toolName, c.input])).toEqual([["t", { a: 1 }]]);
    expect(waits).toEqual([1000]);
    expect(model.requests.at(-1)?.json.stream).toBe(true);
  });
});

describe("the scripted Anthropic server streams the Messages events", () => {
  it("text and tool_use come through streamText", async () => {
    const fake = await startFakeAnthropic();
    try {
      fake.script({ text: "hello", toolCalls: [{ name: "look", args: { q: "x" } }] });
      const result = streamText({
        model: languageModel({ provider: "anthropic", model: "c", base_url: fake.baseUrl, api_key: "k" }),
        prompt: "hi",
        maxRetries: 0,
      });
      expect(await result.text).toBe("hello");
      expect((await result.toolCalls).map((c) => [c.toolName, c.input])).toEqual([["look", { q: "x" }]]);
      expect((await result.usage).outputTokens).toBe(5);
    } finally {
      await fake.close();
    }
  });
});
