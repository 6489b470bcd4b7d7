import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { cutByEndpointBeforeAnyText } from "../../../src/agent/endpointCut.js";
import { modelRunner } from "../../../src/agent/modelRunner.js";
import {
  REASONING_ONLY_FAILURE,
  THINKING_ONLY_FAILURE,
  unfinishedThinkingFailure,
} from "../../../src/agent/thinkText.js";
import { NOT_RUN_CUT_EITHER } from "../../../src/agent/toolLoop.js";
import { type FakeModel, startFakeAnthropic } from "../../fakes/anthropicServer.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { startFakeOpenAI } from "../../fakes/openaiServer.js";
import { type ForwardProxy, startForwardProxy } from "../../helpers/forwardProxy.js";
import { testModelRunner } from "../../helpers/testModelRunner.js";

/**
 * Thinking left in an answer's text is taken apart only where it is thinking (docs/agent.md, the `base_url`
 * setting's reasoning rules): a finished turn whose text starts with an unclosed `<think>` is the answer as written (only a
 * turn cut at its output limit has no text); a `</think>` line counts only as the text's first `</think>`
 * with no `<think>` before it; a finished turn whose text is thinking alone, closed either way, fails the run
 * (no empty reply, no reasoning delivered); OpenAI's own API, which never writes thinking in the text, has its
 * text taken as written. Real
 * sockets on 127.0.0.1, the scripted Chat Completions and Messages API servers; OpenAI's and Azure's hosts
 * reached through a forwarding proxy (HTTP_PROXY) that leads them to the scripted server.
 */

let openai: FakeModel;
let anthropic: FakeModel;
let openaiStreamed: FakeModel;
let anthropicStreamed: FakeModel;
beforeAll(async () => {
  openai = await startFakeOpenAI();
  anthropic = await startFakeAnthropic();
  openaiStreamed = await startFakeOpenAI({ streamAlways: true });
  anthropicStreamed = await startFakeAnthropic({ streamAlways: true });
});
afterAll(async () => {
  await Promise.all([openai, anthropic, openaiStreamed, anthropicStreamed].map((model) => model.close()));
});

const PROXY_NAMES = ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"];
const savedEnv = Object.fromEntries([...PROXY_NAMES, "NO_PROXY", "no_proxy"].map((n) => [n, process.env[n]]));
let proxy: ForwardProxy | undefined;
afterEach(async () => {
  for (const [name, value] of Object.entries(savedEnv))
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  await proxy?.close();
  proxy = undefined;
});

function run(provider: "openai" | "anthropic", baseUrl: string) {
  const log = captureLogger();
  const result = testModelRunner(
    { provider, model: "m", base_url: baseUrl, max_tokens: 50 },
    [],
    log.logger,
  ).run(
    { route: "r", event: "e", deliveryId: "d", prompt: "p", toolsets: [], profile: undefined },
    new AbortController().signal,
  );
  return { result, log };
}

const endpoints = [
  ["openai", "openai", () => openai],
  ["anthropic", "anthropic", () => anthropic],
  ["openai", "openai streamed", () => openaiStreamed],
  ["anthropic", "anthropic streamed", () => anthropicStreamed],
] as const;

const NAMES_THE_TAG =
  "<think> is the tag DeepSeek R1 uses to open its reasoning; svc strips it from replies.";
const TEMPLATE_OPENED_ONLY = "I will just say hi.\n</think>\n";
const CLOSED_ONLY = "<think>\nI will just say hi.\n</think>\n";
const INLINE_FIRST = "Write </think> to close it, like this:\n</think>\nand go on with the answer.";

describe("thinking in a finished turn's text", () => {
  for (const [provider, label, model] of endpoints) {
    it(`${label}: a text that starts with <think> never closed is the answer as written`, async () => {
      model().script({ text: NAMES_THE_TAG });
      const { result } = run(provider, model().baseUrl);
      expect(await result).toMatchObject({ text: NAMES_THE_TAG, record: { outcome: "ok" } });
    });

    // Seen: the template-opened thinking with nothing after its </think> line delivered as the reply, reasoning
    // and all; "<think>…</think>" with nothing after it delivered as an empty reply, outcome ok.
    for (const [shape, text] of [
      ["the template-opened thinking up to a </think> line", TEMPLATE_OPENED_ONLY],
      ["<think>…</think>", CLOSED_ONLY],
    ] as const)
      it(`${label}: a finished answer that is ${shape} and nothing after fails the run`, async () => {
        model().script({ text });
        const { result, log } = run(provider, model().baseUrl);
        await expect(result).rejects.toMatchObject({
          message: THINKING_ONLY_FAILURE,
          record: { outcome: "error", error: THINKING_ONLY_FAILURE, steps: 1 },
        });
        expect(log.lines().join("\n")).not.toContain("I will just say hi.");
      });

    // Seen: Qwen3 told not to think ("<think>\n\n</think>\n\n") with nothing after it failed the run as
    // "held only its thinking", while an empty text is delivered as an empty reply.
    it(`${label}: an empty <think></think> block and nothing after is an empty reply, as an empty text is`, async () => {
      model().script({ text: "<think>\n\n</think>\n\n" });
      const { result } = run(provider, model().baseUrl);
      expect(await result).toMatchObject({ text: "", record: { outcome: "ok" } });
    });

    it(`${label}: a </think> line after a first </think> within a line is no end of thinking`, async () => {
      model().script({ text: INLINE_FIRST });
      const { result } = run(provider, model().baseUrl);
      expect(await result).toMatchObject({ text: INLINE_FIRST });
    });

    it(`${label}: the template-opened thinking up to the first </think> line is still taken apart, with a <think> named after it`, async () => {
      model().script({ text: "The user asks about tags.\n</think>\n\nUse <think> to open it." });
      const { result } = run(provider, model().baseUrl);
      expect(await result).toMatchObject({ text: "Use <think> to open it." });
    });
  }
});

describe("thinking alone in a finished answer", () => {
  it("a sampling request's run (its own max tokens) fails alike, rather than answer the server with an empty text", async () => {
    openai.script({ text: CLOSED_ONLY });
    const log = captureLogger();
    const result = testModelRunner(
      { provider: "openai", model: "m", base_url: openai.baseUrl, max_tokens: 50 },
      [],
      log.logger,
    ).run(
      {
        route: "mcp:notes",
        event: "sampling",
        deliveryId: "d",
        prompt: "p",
        toolsets: [],
        profile: undefined,
        maxTokens: 20,
      },
      new AbortController().signal,
    );
    await expect(result).rejects.toMatchObject({ message: THINKING_ONLY_FAILURE });
  });

  for (const [provider, label, model] of endpoints)
    it(`${label}: thinking with nothing after it in a turn that calls a tool is no failure: the tool's result goes back and the next turn's text is the reply`, async () => {
      model().script(
        { text: CLOSED_ONLY, toolCalls: [{ id: "c1", name: "nope", args: {} }] },
        { text: "Hello!" },
      );
      const { result } = run(provider, model().baseUrl);
      expect(await result).toMatchObject({ text: "Hello!", record: { outcome: "ok", steps: 2 } });
    });
});

// Seen: a finished answer whose reasoning came in its own field and whose text was empty delivered as an empty
// reply with outcome ok, while the same answer with the thinking in its text fails the run.
describe("reasoning sent apart, and no text, in a finished answer", () => {
  for (const [provider, label, model] of endpoints) {
    const turn = (thinking: string) =>
      provider === "openai" ? { text: "", reasoning: thinking } : { text: "", unsignedThinking: thinking };
    // Seen: "held only its thinking (<think>…</think>) … check the model's chat template", while no tags and no
    // template were involved.
    it(`${label}: fails the run as thinking alone in the text does, saying it held only its reasoning`, async () => {
      model().script(turn("I will just say hi."));
      const { result } = run(provider, model().baseUrl);
      await expect(result).rejects.toMatchObject({
        message: REASONING_ONLY_FAILURE,
        record: { outcome: "error", error: REASONING_ONLY_FAILURE, steps: 1 },
      });
    });

    // Seen: "— ask again, or raise agent.max_tokens or lower the reasoning effort", for a turn that finished (one
    // cut at max_tokens has its own message) and with no reasoning effort svc could lower.
    it(`${label}: names only what can be done: ask again, the model's or the server's reasoning settings`, async () => {
      model().script(turn("I will just say hi."));
      const { result } = run(provider, model().baseUrl);
      await expect(result).rejects.toThrow(
        /^the model's answer held only its reasoning and no reply text — ask again; if it goes on, check the model's or the server's reasoning settings$/,
      );
    });

    it(`${label}: reasoning apart and the reply text, finished: the text is the reply`, async () => {
      model().script({
        ...turn("The user says hi."),
        text: "Hi!",
        ...(provider === "anthropic" ? { finishReason: "end_turn" } : { finishReason: "stop" }),
      });
      const { result } = run(provider, model().baseUrl);
      expect(await result).toMatchObject({ text: "Hi!", record: { outcome: "ok", steps: 1 } });
    });

    it(`${label}: blank reasoning is no thinking: an empty reply`, async () => {
      model().script(turn(" \n"));
      const { result } = run(provider, model().baseUrl);
      expect(await result).toMatchObject({ text: "", record: { outcome: "ok" } });
    });

    it(`${label}: reasoning apart in a turn that calls a tool goes on to the next turn's reply`, async () => {
      model().script(
        { ...turn("Look it up."), toolCalls: [{ id: "c1", name: "nope", args: {} }] },
        { text: "Hi!" },
      );
      const { result } = run(provider, model().baseUrl);
      expect(await result).toMatchObject({ text: "Hi!", record: { outcome: "ok", steps: 2 } });
    });
  }
});

// Seen: a Messages API answer of one redacted_thinking block (end_turn) delivered as an empty reply with outcome ok
// (the AI SDK gives it as reasoning with an empty text, its data apart).
describe("a Messages API answer of thinking blocks alone, signed or redacted", () => {
  for (const [label, model] of [
    ["anthropic", () => anthropic],
    ["anthropic streamed", () => anthropicStreamed],
  ] as const) {
    it.each([
      ["redacted_thinking", { type: "redacted_thinking", data: "EmwKAhgBEgy3va3pzix" }],
      ["signed thinking", { type: "thinking", thinking: "I will just say hi.", signature: "sig123" }],
      // Seen: delivered as an empty reply with outcome ok (Claude's thinking with display: omitted, its text empty).
      [
        "signed thinking with an empty text",
        { type: "thinking", thinking: "", signature: "EqQBCkgIARABGAIiQL2xZ0" },
      ],
    ])(`${label}: %s alone, end_turn, fails the run: it held only its reasoning`, async (_kind, block) => {
      model().script({ text: "", blocks: [block] });
      const { result } = run("anthropic", model().baseUrl);
      await expect(result).rejects.toMatchObject({
        message: REASONING_ONLY_FAILURE,
        record: { outcome: "error", error: REASONING_ONLY_FAILURE, steps: 1 },
      });
    });

    it(`${label}: signed thinking with an empty text and a text block: the text is the reply`, async () => {
      model().script({
        text: "",
        blocks: [
          { type: "thinking", thinking: "", signature: "EqQBCkgIARABGAIiQL2xZ0" },
          { type: "text", text: "Hi!" },
        ],
      });
      const { result } = run("anthropic", model().baseUrl);
      expect(await result).toMatchObject({ text: "Hi!", record: { outcome: "ok" } });
    });

    it(`${label}: unsigned thinking with an empty text is no thinking: an empty reply`, async () => {
      model().script({ text: "", blocks: [{ type: "thinking", thinking: "" }] });
      const { result } = run("anthropic", model().baseUrl);
      expect(await result).toMatchObject({ text: "", record: { outcome: "ok" } });
    });

    it(`${label}: redacted_thinking and a text block: the text is the reply`, async () => {
      model().script({
        text: "",
        blocks: [
          { type: "redacted_thinking", data: "EmwK" },
          { type: "text", text: "Hi!" },
        ],
      });
      const { result } = run("anthropic", model().baseUrl);
      expect(await result).toMatchObject({ text: "Hi!", record: { outcome: "ok" } });
    });

    it(`${label}: thinking alone, stop_sequence: a finished answer, it held only its reasoning`, async () => {
      model().script({ text: "", unsignedThinking: "I will just say hi.", finishReason: "stop_sequence" });
      const { result } = run("anthropic", model().baseUrl);
      await expect(result).rejects.toMatchObject({ message: REASONING_ONLY_FAILURE });
    });
  }
});

// Seen: DeepSeek's insufficient_system_resource (inference cut off) and tool_calls with no calls, after reasoning
// and no text, reported as "held only its thinking", as if the model had finished its answer so.
describe("reasoning and no text in an answer the endpoint ended otherwise than as finished", () => {
  for (const [label, model] of [
    ["openai", () => openai],
    ["openai streamed", () => openaiStreamed],
  ] as const)
    it.each(["insufficient_system_resource", "tool_calls"])(
      `${label}: finish_reason %s fails the run naming that reason`,
      async (reason) => {
        model().script({ text: "", reasoning: "Let me think.", finishReason: reason });
        const { result } = run("openai", model().baseUrl);
        const message = unfinishedThinkingFailure(reason);
        expect(message).toContain(`finish reason "${reason}"`);
        await expect(result).rejects.toMatchObject({
          message,
          record: { outcome: "error", error: message },
        });
      },
    );
});

// Seen: Together's finish_reason "eos" and TGI's (watsonx's) "eos_token", the model's end-of-sequence token, read as
// an answer the endpoint ended otherwise than as finished: "ended it with finish reason "eos", not as a finished
// answer — … see the endpoint's documentation", while the same answer with "stop" gets the chat template advice.
describe("an answer ended at the model's end-of-sequence token is a finished one", () => {
  for (const [label, model] of [
    ["openai", () => openai],
    ["openai streamed", () => openaiStreamed],
  ] as const)
    for (const reason of ["eos", "eos_token"]) {
      it(`${label}: finish_reason ${reason}, thinking alone in the text: held only its thinking, the chat template named`, async () => {
        model().script({ text: CLOSED_ONLY, finishReason: reason });
        const { result } = run("openai", model().baseUrl);
        await expect(result).rejects.toMatchObject({
          message: THINKING_ONLY_FAILURE,
          record: { outcome: "error", error: THINKING_ONLY_FAILURE },
        });
      });

      it(`${label}: finish_reason ${reason}, reasoning apart and no text: held only its reasoning`, async () => {
        model().script({ text: "", reasoning: "I will just say hi.", finishReason: reason });
        const { result } = run("openai", model().baseUrl);
        await expect(result).rejects.toMatchObject({ message: REASONING_ONLY_FAILURE });
      });

      it(`${label}: finish_reason ${reason} with a reply: the reply, ok and not cut`, async () => {
        model().script({ text: "Hi!", finishReason: reason });
        const { result } = run("openai", model().baseUrl);
        const answer = await result;
        expect(answer).toMatchObject({ text: "Hi!", record: { outcome: "ok" } });
        expect(answer.record).not.toHaveProperty("cut");
      });
    }
});

// Seen: thinking alone in the text under a reason that is no finished answer lost the chat template advice it gets
// under "stop", and was said as reasoning ("held only its reasoning"), no tags named.
describe("thinking alone in the text of an answer the endpoint ended otherwise than as finished", () => {
  for (const [label, model] of [
    ["openai", () => openai],
    ["openai streamed", () => openaiStreamed],
  ] as const)
    it(`${label}: names the reason and the chat template`, async () => {
      model().script({ text: CLOSED_ONLY, finishReason: "insufficient_system_resource" });
      const { result } = run("openai", model().baseUrl);
      const message = unfinishedThinkingFailure("insufficient_system_resource", "in_text");
      expect(message).toContain("held only its thinking (<think>…</think>)");
      expect(message).toContain('finish reason "insufficient_system_resource"');
      expect(message).toContain("check the model's chat template");
      await expect(result).rejects.toMatchObject({ message, record: { outcome: "error", error: message } });
    });
});

// Seen: DeepSeek's insufficient_system_resource (inference cut off for want of the system's resources) after some text
// recorded and logged as a clean "ok", the text delivered as if whole.
describe("a text answer DeepSeek cut off at insufficient_system_resource", () => {
  for (const [label, model] of [
    ["openai", () => openai],
    ["openai streamed", () => openaiStreamed],
  ] as const)
    it(`${label}: is delivered as it is, recorded as cut by the endpoint with its reason, its line saying so`, async () => {
      model().script({
        text: "The three causes are: 1. the parser",
        finishReason: "insufficient_system_resource",
      });
      const { result, log } = run("openai", model().baseUrl);
      expect(await result).toMatchObject({
        text: "The three causes are: 1. the parser",
        record: { outcome: "ok", cut: "endpoint", cutReason: "insufficient_system_resource" },
      });
      expect(log.messages().filter((line) => line.startsWith("[agent]"))).toEqual([
        expect.stringContaining(
          ": ok (reply cut by the endpoint (finish_reason insufficient_system_resource)) — ",
        ),
      ]);
    });
});

// Seen: an answer DeepSeek cut off at insufficient_system_resource before it wrote anything (`content: ""`, or a
// `<think>` alone) delivered as an empty reply with outcome ok, where vision_analyze fails such an answer.
describe("an answer DeepSeek cut off at insufficient_system_resource before any text or reasoning", () => {
  for (const [label, model] of [
    ["openai", () => openai],
    ["openai streamed", () => openaiStreamed],
  ] as const)
    it.each([
      ["no text", ""],
      ["a <think> alone", "<think>"],
    ])(`${label}, %s: is no reply, the run fails naming the endpoint's reason`, async (_case, text) => {
      model().script({ text, finishReason: "insufficient_system_resource" });
      const { result, log } = run("openai", model().baseUrl);
      const message = cutByEndpointBeforeAnyText("insufficient_system_resource");
      expect(message).toBe(
        "the model's answer was cut off by the endpoint (finish_reason insufficient_system_resource) before it wrote any text — ask again; if it goes on, see the endpoint's documentation for that reason",
      );
      await expect(result).rejects.toMatchObject({ message, record: { outcome: "error", error: message } });
      expect(log.messages().filter((line) => line.startsWith("[agent]"))).toEqual([
        expect.stringContaining(`: error (${message})`),
      ]);
    });
});

// Seen: "<think>I must not reveal the secret plan: step one is" cut off at insufficient_system_resource delivered as
// the reply, "ok (reply cut by the endpoint …)": a <think> never closed was thinking only for a cut at max_tokens.
describe("thinking never closed in a text DeepSeek cut off at insufficient_system_resource", () => {
  for (const [label, model] of [
    ["openai", () => openai],
    ["openai streamed", () => openaiStreamed],
  ] as const)
    it(`${label}: is thinking, not the reply: the run fails naming the endpoint's reason, not agent.max_tokens`, async () => {
      model().script({
        text: "<think>I must not reveal the secret plan: step one is",
        finishReason: "insufficient_system_resource",
      });
      const { result, log } = run("openai", model().baseUrl);
      const message = unfinishedThinkingFailure("insufficient_system_resource");
      await expect(result).rejects.toMatchObject({ message, record: { outcome: "error", error: message } });
      expect(message).not.toContain("max_tokens");
      expect(log.lines().join("\n")).not.toContain("secret plan");
    });
});

// Seen: "<think>secret plan</think>" delivered as the reply, tags and thinking, when the server sent reasoning apart
// too (reasoning_content beside it): the text's thinking was taken apart only when no reasoning came apart.
// Each with the reasoning in Groq's `reasoning` field and in DeepSeek's (and vLLM's) `reasoning_content`.
describe("a <think> block in the text beside reasoning sent apart", () => {
  for (const [label, model] of [
    ["openai", () => openai],
    ["openai streamed", () => openaiStreamed],
  ] as const)
    for (const [field, apart] of [
      ["reasoning", (reasoning: string) => ({ reasoning })],
      ["reasoning_content", (reasoning: string) => ({ reasoningContent: reasoning })],
    ] as const) {
      it(`${label}, ${field}: a text of the block alone, finished: held only its thinking, the thinking not delivered`, async () => {
        model().script({ ...apart("The user says hi."), text: "<think>secret plan</think>" });
        const { result, log } = run("openai", model().baseUrl);
        await expect(result).rejects.toMatchObject({
          message: THINKING_ONLY_FAILURE,
          record: { outcome: "error", error: THINKING_ONLY_FAILURE },
        });
        expect(log.lines().join("\n")).not.toContain("secret plan");
      });

      it(`${label}, ${field}: the block and an answer after it: the answer alone is the reply`, async () => {
        model().script({ ...apart("The user says hi."), text: "<think>plan</think>\nAnswer" });
        const { result } = run("openai", model().baseUrl);
        expect(await result).toMatchObject({ text: "Answer", record: { outcome: "ok" } });
      });

      // Seen (since 10bdc218): "<think> and </think> are the tags DeepSeek R1 uses." delivered as "are the tags DeepSeek
      // R1 uses.", its start taken for thinking, though the server had parsed the thinking out.
      it(`${label}, ${field}: an answer that names the tags in a sentence is taken as written, its start not lost`, async () => {
        const text = "<think> and </think> are the tags DeepSeek R1 uses.";
        model().script({ ...apart("The user asks about tags."), text });
        const { result } = run("openai", model().baseUrl);
        expect(await result).toMatchObject({ text, record: { outcome: "ok" } });
      });

      it(`${label}, ${field}: a block whose </think> ends its line after spaces is thinking, the answer after it the reply`, async () => {
        model().script({ ...apart("The user says hi."), text: "<think>secret plan</think>  \r\n\r\nAnswer" });
        const { result, log } = run("openai", model().baseUrl);
        expect(await result).toMatchObject({ text: "Answer", record: { outcome: "ok" } });
        expect(log.lines().join("\n")).not.toContain("secret plan");
      });

      it(`${label}, ${field}: a </think> line with no <think> at the start is taken as written (the server parsed the thinking out)`, async () => {
        const text = "Write it so:\n</think>\nand go on.";
        model().script({ ...apart("The user asks about tags."), text });
        const { result } = run("openai", model().baseUrl);
        expect(await result).toMatchObject({ text, record: { outcome: "ok" } });
      });
    }
});

// Seen: Mistral's "model_length" (its finish reason for a turn cut at the model's length limit) read as a finished
// turn: a text cut short delivered as whole, and one cut while it thought delivered as its unclosed thinking.
describe('Mistral\'s finish_reason "model_length" is a turn cut short', () => {
  for (const [label, model] of [
    ["openai", () => openai],
    ["openai streamed", () => openaiStreamed],
  ] as const) {
    // Seen: logged "ok (reply cut at agent.max_tokens)", while it may have been the context window.
    it(`${label}: a text answer so cut is delivered, recorded as cut at max_tokens with the reason, its line naming both causes`, async () => {
      model().script({ text: "The answer is", finishReason: "model_length" });
      const { result, log } = run("openai", model().baseUrl);
      expect(await result).toMatchObject({
        text: "The answer is",
        record: { outcome: "ok", cut: "max_tokens", cutReason: "model_length" },
      });
      expect(log.messages().filter((line) => line.startsWith("[agent]"))).toEqual([
        expect.stringContaining(
          ": ok (reply cut at agent.max_tokens or at the end of the model's context window (finish_reason model_length)) — ",
        ),
      ]);
    });

    it(`${label}: a text answer cut at finish_reason length is recorded and logged as cut at agent.max_tokens alone`, async () => {
      model().script({ text: "The answer is", finishReason: "length" });
      const { result, log } = run("openai", model().baseUrl);
      const { record } = await result;
      expect(record).toMatchObject({ outcome: "ok", cut: "max_tokens" });
      expect(record).not.toHaveProperty("cutReason");
      expect(log.messages().filter((line) => line.startsWith("[agent]"))).toEqual([
        expect.stringContaining(": ok (reply cut at agent.max_tokens) — "),
      ]);
    });

    // model_length may be max_tokens or the model's context window: what the run says names both.
    it(`${label}: one cut while it asked for a tool runs none and fails, naming both causes`, async () => {
      model().script({ toolCalls: [{ name: "nope", args: {} }], finishReason: "model_length" });
      const { result } = run("openai", model().baseUrl);
      await expect(result).rejects.toMatchObject({
        message:
          "the model's answer was cut at agent.max_tokens (50 tokens) or at the end of its context window (finish_reason model_length) while it asked for a tool, which was not run — raise agent.max_tokens; if it was the context window, give the run less to read or use a model with a larger context window",
        record: { steps: 1, toolCalls: [{ error: NOT_RUN_CUT_EITHER }] },
      });
    });

    it(`${label}: one cut while it thought fails as cut before any text, naming both causes`, async () => {
      model().script({ text: "<think>\nLet me think about", finishReason: "model_length" });
      const { result } = run("openai", model().baseUrl);
      await expect(result).rejects.toMatchObject({
        message:
          "the model's answer was cut at agent.max_tokens (50 tokens) or at the end of its context window (finish_reason model_length) before it wrote any text (a reasoning model can spend them all on its reasoning) — raise agent.max_tokens; if it was the context window, the prompt and the tool results so far filled it: give the run less to read or use a model with a larger context window",
      });
    });
  }
});

// Seen: "The user says hi. Private reasoning.\n</think>\nHello!" delivered, the thinking with it, when the answer
// came in a text block of its own after the block the thinking ended in.
describe("thinking ending in a Messages API answer's first text block, the reply in the next", () => {
  for (const [label, model] of [
    ["anthropic", () => anthropic],
    ["anthropic streamed", () => anthropicStreamed],
  ] as const)
    it(`${label}: the reply is the later block alone`, async () => {
      model().script({
        text: "The user says hi. Private reasoning.\n</think>\n",
        blocks: [{ type: "text", text: "Hello!" }],
      });
      const { result } = run("anthropic", model().baseUrl);
      expect(await result).toMatchObject({ text: "Hello!", record: { outcome: "ok" } });
    });
});

describe("OpenAI's own API never writes thinking in the text", () => {
  for (const host of ["api.openai.com"])
    it(`${host}: a text that names the tags is delivered as written`, async () => {
      proxy = await startForwardProxy({ [`${host}:80`]: `127.0.0.1:${new URL(openai.baseUrl).port}` });
      for (const name of [...PROXY_NAMES, "NO_PROXY", "no_proxy"]) delete process.env[name];
      process.env.HTTP_PROXY = proxy.url;
      const text =
        "Issue #12 summary: the reply ends its reasoning like this:\n</think>\nFix: upgrade to 2.3.";
      openai.script({ text });
      const { result } = run("openai", `http://${host}${new URL(openai.baseUrl).pathname}`);
      expect(await result).toMatchObject({ text });
      expect(proxy.forwarded).toHaveLength(1);
    });

  // Seen: DeepSeek-R1 on Azure (Foundry's v1 Azure OpenAI APIs), which writes its reasoning in the text within
  // <think></think>, had that reasoning delivered as the reply.
  it("Azure OpenAI (*.openai.azure.com) has its thinking taken apart, as DeepSeek-R1 writes it there", async () => {
    const host = "svc-test.openai.azure.com";
    proxy = await startForwardProxy({ [`${host}:80`]: `127.0.0.1:${new URL(openai.baseUrl).port}` });
    for (const name of [...PROXY_NAMES, "NO_PROXY", "no_proxy"]) delete process.env[name];
    process.env.HTTP_PROXY = proxy.url;
    openai.script({ text: "<think>\nThe user greets me.\n</think>\n\nHello!" });
    const { result } = run("openai", `http://${host}${new URL(openai.baseUrl).pathname}`);
    expect(await result).toMatchObject({ text: "Hello!" });
    expect(proxy.forwarded).toHaveLength(1);
  });

  it("another Chat Completions endpoint has its template-opened thinking taken apart", async () => {
    const text = "Issue #12 summary: the reply ends its reasoning like this:\n</think>\nFix: upgrade to 2.3.";
    openai.script({ text });
    const { result } = run("openai", openai.baseUrl);
    expect(await result).toMatchObject({ text: "Fix: upgrade to 2.3." });
  });
});
