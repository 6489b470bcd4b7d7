import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { AgentReply } from "../../../src/actors/agent/runner.js";
import { modelRunner } from "../../../src/agent/modelRunner.js";
import { visionAnalyzeTool } from "../../../src/agent/tools/visionAnalyze.js";
import { toolsSchema } from "../../../src/config/sections/tools.js";
import { startFakeAnthropic } from "../../fakes/anthropicServer.js";
import { captureLogger } from "../../fakes/logCapture.js";
import type { FakeModel, ModelTurn } from "../../fakes/modelScript.js";
import { callTool, startFakeOpenAI } from "../../fakes/openaiServer.js";
import { pngHeader } from "../../helpers/pngHeader.js";

/**
 * `vision_analyze`'s question about an image is a model call of the run (docs/agent-tools.md): an answer the
 * run's main loop would not take as finished — cut before any text, stopped by a content filter, refused —
 * fails the tool call, which the model sees as the tool's error and the run's line logs as one; a text cut
 * at max_tokens reaches the model with a note that it was cut. Against the scripted Chat Completions and
 * Messages API servers.
 */

const web = toolsSchema.parse({}).web;
const IMAGE = `data:image/png;base64,${pngHeader(4, 4).toString("base64")}`;
const MAX_TOKENS = 100;

let openai: FakeModel;
let anthropic: FakeModel;
beforeAll(async () => {
  [openai, anthropic] = await Promise.all([startFakeOpenAI(), startFakeAnthropic()]);
});
afterAll(async () => {
  await Promise.all([openai?.close(), anthropic?.close()]);
});
beforeEach(() => {
  openai.requests.length = 0;
  anthropic.requests.length = 0;
});

interface VisionRun {
  readonly reply: AgentReply;
  /** The tool result the model got for its vision_analyze call. */
  readonly toolResult: string;
  /** The run's `[agent]` line. */
  readonly line: string;
}

/**
 * A run whose model asks vision_analyze about an image, the image question answered with `answer` (each of
 * `answer`'s turns in order, for a call retried `retries` times).
 */
async function visionRun(
  provider: "openai" | "anthropic",
  answer: ModelTurn | ModelTurn[],
  options: { retries?: number; api_key?: string } = {},
): Promise<VisionRun> {
  const model = provider === "openai" ? openai : anthropic;
  const answers = Array.isArray(answer) ? answer : [answer];
  model.script(callTool("vision_analyze", { image_url: IMAGE, question: "What is it?" }), ...answers, {
    text: "done",
  });
  const log = captureLogger();
  const reply = await modelRunner({
    settings: {
      provider,
      model: "vision-model",
      base_url: model.baseUrl,
      max_steps: 5,
      max_tokens: MAX_TOKENS,
      retries: options.retries ?? 0,
      timeout_seconds: 10,
      max_concurrent_runs: 1,
      max_tool_result_chars: 100_000,
      ...(options.api_key === undefined ? {} : { api_key: options.api_key }),
    },
    logger: log.logger,
    // The waits between retries pass at once.
    sleep: async () => {},
    builtins: () => [visionAnalyzeTool(web)],
  }).run(
    { route: "r", event: "e", deliveryId: "d", prompt: "look", toolsets: [], profile: undefined },
    new AbortController().signal,
  );
  // The last request (after the run's first turn and the image question's) carries the tool's result.
  const messages = (model.requests.at(-1)?.json.messages ?? []) as Array<{ role: string; content: unknown }>;
  const toolResult =
    provider === "openai"
      ? String(messages.find((m) => m.role === "tool")?.content)
      : String(
          ((messages.at(-1)?.content ?? []) as Array<{ type: string; content?: unknown }>).find(
            (block) => block.type === "tool_result",
          )?.content,
        );
  const line = log.messages().find((m) => m.startsWith("[agent] r d:")) ?? "";
  return { reply, toolResult, line };
}

const CUT_BEFORE_TEXT = `vision_analyze failed: the model's answer was cut at agent.max_tokens (${MAX_TOKENS} tokens) before it wrote any text (a reasoning model can spend them all on its reasoning) — raise agent.max_tokens`;

describe("vision_analyze: an image answer cut before it wrote any text", () => {
  it.each([
    // Claude's extended thinking (or Ollama's thinking models) spending the limit on its reasoning.
    ["anthropic", { unsignedThinking: "Let me look at every pixel", finishReason: "max_tokens" }],
    // A reasoning model behind Chat Completions: content null, finish_reason length.
    ["openai", { finishReason: "length" }],
  ] as const)(
    "%s: fails the tool call, as the main loop's run fails, not '(the tool returned no output)'",
    async (provider, answer) => {
      const { reply, toolResult, line } = await visionRun(provider, answer);
      expect(toolResult).toBe(CUT_BEFORE_TEXT);
      expect(reply.text).toBe("done");
      expect(reply.record?.toolCalls).toEqual([
        { name: "vision_analyze", ms: expect.any(Number), ok: false, error: CUT_BEFORE_TEXT },
      ]);
      expect(line).toMatch(/\(vision_analyze error \d+ms\)/);
      // The image question's tokens count in the run's usage, answer or not (three calls of 10 in, 5 out).
      expect(reply.record?.usage).toEqual({ input: 30, output: 15 });
    },
  );

  it("anthropic: one that filled the model's context window says so, not to raise max_tokens", async () => {
    const { toolResult } = await visionRun("anthropic", {
      unsignedThinking: "Let me look",
      finishReason: "model_context_window_exceeded",
    });
    expect(toolResult).toBe(
      "vision_analyze failed: the model's answer was cut at the end of its context window (stop_reason model_context_window_exceeded) before it wrote any text — the image and the question filled it: ask about a smaller image or use a model with a larger context window",
    );
  });
});

describe("vision_analyze: an image answer the endpoint's safety system stopped", () => {
  it("anthropic stop_reason refusal: fails the tool call, its text not handed on as the answer", async () => {
    const { toolResult, reply, line } = await visionRun("anthropic", {
      text: "The image shows",
      finishReason: "refusal",
    });
    const error =
      'vision_analyze failed: the model refused to answer (stop_reason refusal) — there is no answer to give: the image or the question set it off; ask about it in other words or about another image, or use another agent.model than "vision-model"';
    expect(toolResult).toBe(error);
    expect(reply.record?.toolCalls).toEqual([
      { name: "vision_analyze", ms: expect.any(Number), ok: false, error },
    ]);
    expect(line).toMatch(/\(vision_analyze error \d+ms\)/);
  });

  it("openai finish_reason content_filter: fails the tool call, its partial text not handed on", async () => {
    const { toolResult, reply } = await visionRun("openai", {
      text: "partial descr",
      finishReason: "content_filter",
    });
    const error =
      "vision_analyze failed: the endpoint's content filter stopped the model's answer (finish_reason content_filter) — there is no answer to give: the image or the question set it off; ask about it in other words or about another image, or use another agent.model than \"vision-model\"; on Azure OpenAI, the deployment's content filter decides";
    expect(toolResult).toBe(error);
    expect(reply.record?.toolCalls).toEqual([
      { name: "vision_analyze", ms: expect.any(Number), ok: false, error },
    ]);
  });

  it("openai: a refusal the model wrote (finish_reason stop) is a whole answer, handed on as the main loop delivers it", async () => {
    const { toolResult, reply } = await visionRun("openai", { refusal: "I can't help with that image." });
    expect(toolResult).toBe("I can't help with that image.");
    expect(reply.record?.toolCalls).toEqual([{ name: "vision_analyze", ms: expect.any(Number), ok: true }]);
  });
});

describe("vision_analyze: an image answer cut after some text", () => {
  it("openai finish_reason length: the text reaches the model with a note that it was cut", async () => {
    const { toolResult, reply } = await visionRun("openai", {
      text: "A cat sitting on a",
      finishReason: "length",
    });
    expect(toolResult).toBe(
      `A cat sitting on a\n\n[the answer was cut at agent.max_tokens (${MAX_TOKENS} tokens) here: it is incomplete]`,
    );
    expect(reply.record?.toolCalls).toEqual([{ name: "vision_analyze", ms: expect.any(Number), ok: true }]);
  });

  it("anthropic stop_reason max_tokens, and model_context_window_exceeded: each says where it was cut", async () => {
    const cut = await visionRun("anthropic", { text: "A cat sitting on a", finishReason: "max_tokens" });
    expect(cut.toolResult).toBe(
      `A cat sitting on a\n\n[the answer was cut at agent.max_tokens (${MAX_TOKENS} tokens) here: it is incomplete]`,
    );
    anthropic.requests.length = 0;
    const full = await visionRun("anthropic", {
      text: "A cat sitting on a",
      finishReason: "model_context_window_exceeded",
    });
    expect(full.toolResult).toBe(
      "A cat sitting on a\n\n[the answer was cut at the end of the model's context window here: it is incomplete]",
    );
  });

  it("openai finish_reason model_length: the note names both causes, max_tokens or the context window", async () => {
    const { toolResult } = await visionRun("openai", {
      text: "A cat sitting on a",
      finishReason: "model_length",
    });
    expect(toolResult).toBe(
      `A cat sitting on a\n\n[the answer was cut at agent.max_tokens (${MAX_TOKENS} tokens) or at the end of the model's context window here: it is incomplete]`,
    );
    const none = await visionRun("openai", { finishReason: "model_length" });
    expect(none.toolResult).toBe(
      `vision_analyze failed: the model's answer was cut at agent.max_tokens (${MAX_TOKENS} tokens) or at the end of its context window (finish_reason model_length) before it wrote any text (a reasoning model can spend them all on its reasoning) — raise agent.max_tokens; if it was the context window, the image and the question filled it: ask about a smaller image or use a model with a larger context window`,
    );
  });

  // Seen: "A cat sitting on a" cut off at insufficient_system_resource handed to the model as the whole answer.
  it("openai finish_reason insufficient_system_resource: the note says the endpoint cut it off, naming the reason", async () => {
    const { toolResult, reply } = await visionRun("openai", {
      text: "A cat sitting on a",
      finishReason: "insufficient_system_resource",
    });
    expect(toolResult).toBe(
      "A cat sitting on a\n\n[the answer was cut off by the endpoint (finish_reason insufficient_system_resource) here: it is incomplete]",
    );
    expect(reply.record?.toolCalls).toEqual([{ name: "vision_analyze", ms: expect.any(Number), ok: true }]);
    const none = await visionRun("openai", { text: "", finishReason: "insufficient_system_resource" });
    expect(none.toolResult).toBe(
      "vision_analyze failed: the model's answer was cut off by the endpoint (finish_reason insufficient_system_resource) before it wrote any text — ask again; if it goes on, see the endpoint's documentation for that reason",
    );
  });

  it("an answer that ended as it should is handed on as it is", async () => {
    const { toolResult } = await visionRun("anthropic", { text: "A cat on a keyboard." });
    expect(toolResult).toBe("A cat on a keyboard.");
  });
});

const THINKING_ONLY = `vision_analyze failed: the model's answer held only its thinking (<think>…</think>) and no reply text — ask again, or check the model's chat template and the server's reasoning settings`;
const REASONING_ONLY = `vision_analyze failed: the model's answer held only its reasoning and no reply text — ask again; if it goes on, check the model's or the server's reasoning settings`;

// Seen: "(the tool returned no output)" with ok:true for an image answer that held only the model's thinking, and
// before that the template-opened thinking handed on as the answer.
describe("vision_analyze: a finished image answer that held only the model's thinking", () => {
  it.each([
    ["template-opened", "A red square on white.\n</think>\n"],
    ["<think>…</think>", "<think>\nA red square on white.\n</think>\n"],
  ])("%s, finish_reason stop: fails the tool call, as the main loop's run fails", async (_label, text) => {
    const { reply, toolResult, line } = await visionRun("openai", { text });
    expect(toolResult).toBe(THINKING_ONLY);
    expect(reply.text).toBe("done");
    expect(reply.record?.toolCalls).toEqual([
      { name: "vision_analyze", ms: expect.any(Number), ok: false, error: THINKING_ONLY },
    ]);
    expect(line).toMatch(/\(vision_analyze error \d+ms\)/);
  });

  // Seen: a redacted_thinking block alone handed on as "(the tool returned no output)", ok; and reasoning sent
  // apart failing with the <think>…</think> and chat template message, no tags and no template involved.
  it.each([
    ["openai", { text: "", reasoning: "A red square on white." }],
    ["anthropic", { text: "", unsignedThinking: "A red square on white." }],
    ["anthropic", { text: "", blocks: [{ type: "thinking", thinking: "A red square.", signature: "s" }] }],
    ["anthropic", { text: "", blocks: [{ type: "redacted_thinking", data: "EmwK" }] }],
  ] as const)(
    "%s, the reasoning sent apart and no text (%j): fails the tool call too, saying it held only its reasoning",
    async (provider, answer) => {
      const { toolResult, reply } = await visionRun(provider, answer);
      expect(toolResult).toBe(REASONING_ONLY);
      expect(reply.record?.toolCalls).toEqual([
        { name: "vision_analyze", ms: expect.any(Number), ok: false, error: REASONING_ONLY },
      ]);
    },
  );

  it("openai, reasoning and no text, finish_reason insufficient_system_resource: fails naming that reason", async () => {
    const { toolResult } = await visionRun("openai", {
      text: "",
      reasoning: "A red square.",
      finishReason: "insufficient_system_resource",
    });
    expect(toolResult).toBe(
      `vision_analyze failed: the model's answer held only its reasoning and no reply text, and the endpoint ended it with finish reason "insufficient_system_resource", not as a finished answer — ask again; if it goes on, see the endpoint's documentation for that reason`,
    );
  });

  it.each([
    ["openai", { text: "A red square.", reasoning: "Look at it." }],
    ["anthropic", { text: "A red square.", unsignedThinking: "Look at it." }],
  ] as const)("%s, reasoning apart and the answer text: the text is handed on", async (provider, answer) => {
    const { toolResult } = await visionRun(provider, answer);
    expect(toolResult).toBe("A red square.");
  });

  it("anthropic, <think>…</think> in its text block, end_turn: fails the tool call too", async () => {
    const { toolResult } = await visionRun("anthropic", { text: "<think>\nA red square.\n</think>\n" });
    expect(toolResult).toBe(THINKING_ONLY);
  });
});

describe("vision_analyze: an image question the endpoint failed says what it answered, as a failed run does", () => {
  it("openai, a proxy's 502 page after the retries: the endpoint, the status and the page's title, not 'Bad Gateway'", async () => {
    const page = {
      status: 502,
      headers: { "content-type": "text/html" },
      body: "<html><head><title>502 Bad Gateway</title></head><body><center>nginx</center></body></html>",
    };
    const { toolResult, reply } = await visionRun("openai", [page, page, page], { retries: 2 });
    const error = `vision_analyze failed: model endpoint ${openai.baseUrl}/chat/completions answered HTTP 502: an HTML page "502 Bad Gateway" (${page.body.length} characters, not shown)`;
    expect(toolResult).toBe(error);
    expect(reply.record?.toolCalls).toEqual([
      { name: "vision_analyze", ms: expect.any(Number), ok: false, error },
    ]);
    // Asked three times: the run's turn, three image questions, the run's last turn.
    expect(openai.requests).toHaveLength(5);
  });

  it("openai, a 401: the status, the endpoint's message without the key, and the setting to check", async () => {
    const KEY = "sk-vision-key-0123456789abcdef";
    const { toolResult } = await visionRun(
      "openai",
      {
        status: 401,
        body: JSON.stringify({
          error: {
            message: `Incorrect API key provided: ${KEY}`,
            type: "invalid_request_error",
            code: "invalid_api_key",
          },
        }),
      },
      { api_key: KEY },
    );
    expect(toolResult).toMatch(
      new RegExp(
        `^vision_analyze failed: model endpoint ${openai.baseUrl}/chat/completions answered HTTP 401: .*Incorrect API key provided: \\[redacted\\].* — check agent\\.api_key: the endpoint did not take it$`,
      ),
    );
    expect(toolResult).not.toContain(KEY);
  });

  it("anthropic, a prompt too long: that the image and the question fill the model's context, not the run's tool results", async () => {
    const { toolResult } = await visionRun("anthropic", {
      status: 400,
      body: JSON.stringify({
        type: "error",
        error: {
          type: "invalid_request_error",
          message: "prompt is too long: 215123 tokens > 200000 maximum",
        },
      }),
    });
    expect(toolResult).toMatch(
      new RegExp(
        `^vision_analyze failed: model endpoint ${anthropic.baseUrl}/messages answered HTTP 400: .*prompt is too long: 215123 tokens > 200000 maximum.* — vision_analyze's request \\(the image and the question\\) fills the model's context \\(200000 tokens\\): ask about a smaller image, or use a model with a larger context$`,
      ),
    );
  });

  it("openai, a 413 from a proxy, and Azure's content filter refusing the request: the image is what to change", async () => {
    const tooLarge = await visionRun("openai", {
      status: 413,
      headers: { "content-type": "text/html" },
      body: "<html><head><title>413 Request Entity Too Large</title></head></html>",
    });
    expect(tooLarge.toolResult).toMatch(
      / answered HTTP 413: an HTML page "413 Request Entity Too Large" \(\d+ characters, not shown\) — vision_analyze's request \(the image, sent inline, and the question\) is larger than the server, or a proxy in front of it, takes: ask about a smaller image, or raise the server's limit \(nginx: client_max_body_size\)$/,
    );
    openai.requests.length = 0;
    const filtered = await visionRun("openai", {
      status: 400,
      body: JSON.stringify({
        error: {
          message:
            "The response was filtered due to the prompt triggering Azure OpenAI's content management policy.",
          type: null,
          param: "prompt",
          code: "content_filter",
          status: 400,
        },
      }),
    });
    expect(filtered.toolResult).toMatch(
      / — the endpoint's content filter refused vision_analyze's request: the image or the question set it off; on Azure OpenAI, the deployment's content filter decides$/,
    );
  });
});
