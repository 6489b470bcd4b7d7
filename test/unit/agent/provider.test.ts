import { generateText, jsonSchema, tool } from "ai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { languageModel, modelEndpoint, speaksMaxCompletionTokens } from "../../../src/agent/provider.js";
import { startFakeAnthropic } from "../../fakes/anthropicServer.js";
import { type FakeModel, startFakeOpenAI } from "../../fakes/openaiServer.js";

/**
 * The output limit's name in a Chat Completions request: OpenAI's own API refuses `max_tokens` for its
 * reasoning models, other servers read `max_tokens`. The requests go to the local fake: a fetch that sends
 * `https://api.openai.com/v1/...` to the fake's origin, the request itself unchanged.
 */
describe("agent.max_tokens in a Chat Completions request", () => {
  let model: FakeModel;
  const realFetch = globalThis.fetch;
  beforeAll(async () => {
    model = await startFakeOpenAI();
  });
  afterEach(() => {
    globalThis.fetch = realFetch;
  });
  afterAll(() => model.close());

  const ask = async (baseUrl: string) => {
    model.script({ text: "hi" });
    await generateText({
      model: languageModel({ provider: "openai", model: "gpt-5", base_url: baseUrl, api_key: "k" }),
      prompt: "p",
      maxOutputTokens: 77,
    });
    return model.requests.at(-1)?.json;
  };

  it("is max_completion_tokens for OpenAI's own API", async () => {
    const fakeOrigin = new URL(model.baseUrl).origin;
    globalThis.fetch = (input, init) =>
      realFetch(String(input).replace("https://api.openai.com", fakeOrigin), init);
    const body = await ask("https://api.openai.com/v1");
    expect(body?.max_completion_tokens).toBe(77);
    expect(body).not.toHaveProperty("max_tokens");
  });

  it("OpenAI's own API gets a tool description cut to 1024 characters (it refuses a longer one); another server gets it whole", async () => {
    const long = `${"é".repeat(1100)}`;
    const tools = {
      big: tool({
        description: long,
        inputSchema: jsonSchema<Record<string, never>>({ type: "object", properties: {} }),
        execute: async () => "ok",
      }),
      small: tool({
        description: "short",
        inputSchema: jsonSchema<Record<string, never>>({ type: "object", properties: {} }),
        execute: async () => "ok",
      }),
    };
    const send = async (baseUrl: string) => {
      model.script({ text: "hi" });
      await generateText({
        model: languageModel({ provider: "openai", model: "gpt-5", base_url: baseUrl, api_key: "k" }),
        prompt: "p",
        tools,
      });
      const sent = model.requests.at(-1)?.json.tools as Array<{ function: { description: string } }>;
      return sent.map((t) => t.function.description);
    };
    const fakeOrigin = new URL(model.baseUrl).origin;
    globalThis.fetch = (input, init) =>
      realFetch(String(input).replace("https://api.openai.com", fakeOrigin), init);
    const [cut, short] = await send("https://api.openai.com/v1");
    expect(Array.from(cut ?? "")).toHaveLength(1024);
    expect(cut).toBe(`${"é".repeat(1023)}…`);
    expect(short).toBe("short");
    globalThis.fetch = realFetch;
    expect(await send(model.baseUrl)).toEqual([long, "short"]);
  });

  it("stays max_tokens for another server (Ollama, vLLM, a proxy)", async () => {
    const body = await ask(model.baseUrl);
    expect(body?.max_tokens).toBe(77);
    expect(body).not.toHaveProperty("max_completion_tokens");
  });

  it("a server that refuses max_tokens as OpenAI does (a proxy in front of its API) gets the request again with max_completion_tokens, and from then on at once", async () => {
    // A fake of its own: the endpoint learned is remembered by its URL.
    const proxy = await startFakeOpenAI();
    try {
      const refusal = {
        error: {
          message:
            "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
          type: "invalid_request_error",
          param: "max_tokens",
          code: "unsupported_parameter",
        },
      };
      proxy.script({ status: 400, body: JSON.stringify(refusal) }, { text: "hi" }, { text: "again" });
      const ask = () =>
        generateText({
          model: languageModel({ provider: "openai", model: "gpt-5", base_url: proxy.baseUrl, api_key: "k" }),
          prompt: "p",
          maxOutputTokens: 77,
          maxRetries: 0,
        });
      expect((await ask()).text).toBe("hi");
      expect((await ask()).text).toBe("again");
      const sent = proxy.requests.map((r) => [r.json.max_tokens, r.json.max_completion_tokens]);
      expect(sent).toEqual([
        [77, undefined],
        [undefined, 77],
        [undefined, 77],
      ]);
      // Another 400 is the run's error, sent once.
      proxy.requests.length = 0;
      const other = await startFakeOpenAI();
      other.script({ status: 400, body: '{"error":{"message":"bad request"}}' });
      const failed = await generateText({
        model: languageModel({ provider: "openai", model: "m", base_url: other.baseUrl }),
        prompt: "p",
        maxRetries: 0,
      }).catch((e: unknown) => e);
      await other.close();
      expect(failed).toBeInstanceOf(Error);
      expect(other.requests).toHaveLength(1);
    } finally {
      await proxy.close();
    }
  });

  it("vLLM's refusal of a max_tokens too large for the model's context, which names max_completion_tokens too, is the run's error, sent once and not learned", async () => {
    const vllm = await startFakeOpenAI();
    try {
      const tooLarge = {
        object: "error",
        message:
          "'max_tokens' or 'max_completion_tokens' is too large: 77. This model's maximum context length is 80 tokens and your request has 12 input tokens (77 > 80 - 12).",
        type: "BadRequestError",
        param: null,
        code: 400,
      };
      vllm.script({ status: 400, body: JSON.stringify(tooLarge) }, { text: "hi" });
      const ask = () =>
        generateText({
          model: languageModel({ provider: "openai", model: "small", base_url: vllm.baseUrl }),
          prompt: "p",
          maxOutputTokens: 77,
          maxRetries: 0,
        });
      expect(await ask().catch((e: unknown) => e)).toBeInstanceOf(Error);
      expect((await ask()).text).toBe("hi");
      const sent = vllm.requests.map((r) => [r.json.max_tokens, r.json.max_completion_tokens]);
      expect(sent).toEqual([
        [77, undefined],
        [77, undefined],
      ]);
    } finally {
      await vllm.close();
    }
  });

  it("a proxy in front of OpenAI's API that refuses a long tool description, then max_tokens, gets the request again with each fixed", async () => {
    const proxy = await startFakeOpenAI();
    try {
      const refused = (message: string, param: string) => ({
        status: 400,
        body: JSON.stringify({ error: { message, type: "invalid_request_error", param, code: "x" } }),
      });
      proxy.script(
        refused(
          "Invalid 'tools[0].function.description': string too long. Expected a string with maximum length 1024, but got a string with length 1100 instead.",
          "tools[0].function.description",
        ),
        refused(
          "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
          "max_tokens",
        ),
        { text: "hi" },
      );
      const answer = await generateText({
        model: languageModel({ provider: "openai", model: "gpt-5", base_url: proxy.baseUrl, api_key: "k" }),
        prompt: "p",
        maxOutputTokens: 77,
        maxRetries: 0,
        tools: {
          big: tool({
            description: "d".repeat(1100),
            inputSchema: jsonSchema<Record<string, never>>({ type: "object", properties: {} }),
          }),
        },
      });
      expect(answer.text).toBe("hi");
      const sent = proxy.requests.map((r) => [
        (r.json.tools as Array<{ function: { description: string } }>)[0]?.function.description.length,
        r.json.max_tokens,
        r.json.max_completion_tokens,
      ]);
      expect(sent).toEqual([
        [1100, 77, undefined],
        [1024, 77, undefined],
        [1024, undefined, 77],
      ]);
    } finally {
      await proxy.close();
    }
  });

  it("OpenAI's API and Azure OpenAI by host, nothing else", () => {
    expect(speaksMaxCompletionTokens("https://api.openai.com/v1")).toBe(true);
    expect(speaksMaxCompletionTokens("https://API.OpenAI.com/v1/")).toBe(true);
    expect(speaksMaxCompletionTokens("https://my-res.openai.azure.com/openai/v1")).toBe(true);
    // Azure OpenAI's newer resource endpoints and Azure AI Foundry's OpenAI path.
    expect(speaksMaxCompletionTokens("https://my-res.cognitiveservices.azure.com/openai/v1")).toBe(true);
    expect(speaksMaxCompletionTokens("https://my-proj.services.ai.azure.com/openai/v1/")).toBe(true);
    expect(speaksMaxCompletionTokens("https://my-proj.services.ai.azure.com/models")).toBe(false);
    expect(speaksMaxCompletionTokens("https://openrouter.ai/api/v1")).toBe(false);
    expect(speaksMaxCompletionTokens("http://127.0.0.1:11434/v1")).toBe(false);
    expect(speaksMaxCompletionTokens("https://api.openai.com.evil.example/v1")).toBe(false);
  });
});

describe("the anthropic-beta header of a Messages API request", () => {
  it("carries no structured-outputs beta (svc uses none; Vertex AI and Bedrock refuse the request with it)", async () => {
    const fake = await startFakeAnthropic();
    try {
      fake.script({ text: "hi" });
      const look = tool({
        description: "Look",
        inputSchema: jsonSchema<Record<string, never>>({ type: "object", properties: {} }),
        execute: async () => "ok",
      });
      await generateText({
        model: languageModel({
          provider: "anthropic",
          model: "claude-sonnet-4-5",
          base_url: fake.baseUrl,
          api_key: "k",
        }),
        prompt: "p",
        tools: { look },
      });
      expect(fake.requests[0]?.headers["anthropic-version"]).toBe("2023-06-01");
      expect(fake.requests[0]?.headers).not.toHaveProperty("anthropic-beta");
    } finally {
      await fake.close();
    }
  });
});

describe("the endpoint a model's requests go to", () => {
  const realFetch = globalThis.fetch;
  afterEach(() => {
    globalThis.fetch = realFetch;
  });

  const sentHeaders: Headers[] = [];
  /** The URL one request of `settings` goes to (answered in memory, no socket). */
  const postedTo = async (settings: Parameters<typeof languageModel>[0]) => {
    const urls: string[] = [];
    globalThis.fetch = async (input, init) => {
      urls.push(String(input));
      sentHeaders.push(new Headers(init?.headers));
      const body =
        settings.provider === "anthropic"
          ? {
              id: "m",
              type: "message",
              role: "assistant",
              model: "m",
              content: [{ type: "text", text: "hi" }],
              stop_reason: "end_turn",
              usage: { input_tokens: 1, output_tokens: 1 },
            }
          : {
              id: "c",
              object: "chat.completion",
              created: 1,
              model: "m",
              choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: "stop" }],
            };
      return new Response(JSON.stringify(body), { headers: { "content-type": "application/json" } });
    };
    await generateText({ model: languageModel(settings), prompt: "p", maxOutputTokens: 10 });
    return urls[0];
  };

  it("is the one svc names: Anthropic's own API written without /v1 (as ANTHROPIC_BASE_URL is) is taken with it", async () => {
    for (const base_url of [
      "https://api.anthropic.com",
      "https://api.anthropic.com/",
      "https://API.anthropic.com",
    ]) {
      const settings = { provider: "anthropic" as const, model: "claude-sonnet-4-5", base_url, api_key: "k" };
      expect(modelEndpoint(settings)).toBe("https://api.anthropic.com/v1/messages");
      expect(await postedTo(settings)).toBe("https://api.anthropic.com/v1/messages");
    }
    // Any other base is used as written, trailing slashes dropped, for both providers.
    for (const [provider, base_url, endpoint] of [
      ["anthropic", "http://127.0.0.1:4000/", "http://127.0.0.1:4000/messages"],
      ["anthropic", "https://gw.example/anthropic/v1//", "https://gw.example/anthropic/v1/messages"],
      ["openai", "http://127.0.0.1:11434/v1//", "http://127.0.0.1:11434/v1/chat/completions"],
      ["openai", "https://api.openai.com", "https://api.openai.com/chat/completions"],
    ] as const) {
      const settings = { provider, model: "m", base_url, api_key: "k" };
      expect(modelEndpoint(settings)).toBe(endpoint);
      expect(await postedTo(settings)).toBe(endpoint);
    }
  });

  it("carries no key header when agent.api_key is left out (a local endpoint that needs none)", async () => {
    for (const provider of ["anthropic", "openai"] as const) {
      sentHeaders.length = 0;
      await postedTo({ provider, model: "m", base_url: "http://127.0.0.1:4000/v1" });
      expect(sentHeaders[0]?.has("x-api-key")).toBe(false);
      expect(sentHeaders[0]?.has("authorization")).toBe(false);
      sentHeaders.length = 0;
      await postedTo({ provider, model: "m", base_url: "http://127.0.0.1:4000/v1", api_key: "k" });
      expect(sentHeaders[0]?.get(provider === "anthropic" ? "x-api-key" : "authorization")).toBe(
        provider === "anthropic" ? "k" : "Bearer k",
      );
    }
  });
});
