import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AgentRunFailure } from "../../../src/actors/agent/runner.js";
import { outcomeOf } from "../../../src/agent/mcpTools.js";
import { systemText } from "../../../src/agent/modelRunner.js";
import { MAX_TURN_CONTINUATIONS } from "../../../src/agent/pausedTurns.js";
import { languageModel } from "../../../src/agent/provider.js";
import { type RunRecord, runLogLine } from "../../../src/agent/runRecord.js";
import { modelToolName, sdkTools, ToolCallLog, type ToolResultImages } from "../../../src/agent/sdkTools.js";
import {
  type LoopProgress,
  NOT_RUN_CUT,
  NOT_RUN_CUT_CONTEXT,
  NOT_RUN_FILTERED,
  notRunCutByEndpoint,
  runToolLoop,
} from "../../../src/agent/toolLoop.js";
import type { AgentTool, ToolContext } from "../../../src/agent/tools/tool.js";
import { startFakeAnthropic } from "../../fakes/anthropicServer.js";
import { callTool, type FakeModel, startFakeOpenAI } from "../../fakes/openaiServer.js";
import { pngHeader } from "../../helpers/pngHeader.js";
import { testModelRunner } from "../../helpers/testModelRunner.js";
import { toolContext } from "../../helpers/toolContext.js";

const png = (width: number, height: number) => pngHeader(width, height).toString("base64");

/** The tool loop alone: a plain AgentTool (no MCP hub) against the scripted Chat Completions server. */

let model: FakeModel;
beforeAll(async () => {
  model = await startFakeOpenAI();
});
afterAll(() => model.close());
beforeEach(() => {
  model.requests.length = 0;
});

const context: ToolContext = toolContext({ route: "r", deliveryId: "d" });

const upper: AgentTool = {
  name: "upper",
  description: "Upper-cases text",
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  async execute(args) {
    const text = (args as { text?: unknown }).text;
    if (typeof text !== "string") return { ok: false, error: "text must be a string" };
    return { ok: true, content: [{ type: "text", text: text.toUpperCase() }] };
  },
};

/** Echoes its text back, or fails quoting it: a tool that repeats what it was given (a key included). */
const echo: AgentTool = {
  name: "echo",
  description: "Echoes",
  inputSchema: { type: "object", properties: { text: { type: "string" }, fail: { type: "boolean" } } },
  async execute(args) {
    const { text, fail } = args as { text: string; fail?: boolean };
    return fail === true
      ? { ok: false, error: `boom key=${text}` }
      : { ok: true, content: [{ type: "text", text: `you said ${text}` }] };
  },
};

const PIXEL = Buffer.from("fake png bytes").toString("base64");
/** The first bytes of a JPEG (SOI, JFIF) and of a WebP (RIFF ... WEBP), as the Messages API reads them. */
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0]).toString("base64");
const WEBP = Buffer.from("RIFF\x24\0\0\0WEBPVP8 ", "latin1").toString("base64");
const screenshot: AgentTool = {
  name: "screenshot",
  description: "Takes a screenshot",
  inputSchema: { type: "object", properties: {} },
  async execute() {
    return {
      ok: true,
      content: [
        { type: "text", text: "here it is" },
        { type: "image", data: PIXEL, mimeType: "image/png" },
      ],
    };
  },
};

async function loop(
  maxSteps: number,
  tools: AgentTool[] = [upper],
  scrubbed?: (text: string) => string,
  images: ToolResultImages = "described",
  on: { provider: "openai" | "anthropic"; baseUrl: string } = { provider: "openai", baseUrl: model.baseUrl },
) {
  const log = new ToolCallLog();
  let t = 0;
  const progress: LoopProgress = { steps: 0, inputTokens: 0, outputTokens: 0 };
  const result = await runToolLoop(
    {
      model: languageModel({ provider: on.provider, model: "m", base_url: on.baseUrl, api_key: "k" }),
      system: "sys",
      prompt: "go",
      tools: sdkTools(tools, context, log, {
        elapsed: () => (t += 5),
        ...(scrubbed === undefined ? {} : { scrubbed }),
        images,
        safePropertyKeys: on.provider === "anthropic",
        mayRun: () => progress.steps < maxSteps - 1,
      }),
      maxSteps,
      maxTokens: 100,
      signal: context.signal,
      log,
    },
    progress,
  );
  return { result, log, progress };
}

/** One run of a model runner of `provider` at `baseUrl` (5 steps, 50 tokens, no retry) offered `tools`. */
function runModel(provider: "openai" | "anthropic", baseUrl: string, tools: AgentTool[] = [upper]) {
  return testModelRunner({ provider, model: "m", base_url: baseUrl, max_tokens: 50 }, tools).run(
    { route: "r", event: "e", deliveryId: "d", prompt: "p", toolsets: [], profile: undefined },
    new AbortController().signal,
  );
}

describe("runToolLoop", () => {
  it("runs the tool, feeds its result back, and counts steps, tokens and calls", async () => {
    model.script(callTool("upper", { text: "hi" }), { text: "HI it is" });
    const { result, log, progress } = await loop(5);
    expect(result).toEqual({
      text: "HI it is",
      stoppedAtMaxSteps: false,
      cutAtMaxTokens: false,
      cutToolCalls: 0,
      modelId: "m",
    });
    expect(progress).toEqual({ steps: 2, inputTokens: 20, outputTokens: 10 });
    expect(log.calls).toEqual([{ name: "upper", ms: 5, ok: true }]);
    const second = model.requests[1]?.json.messages as Array<{ role: string; content: unknown }>;
    expect(second.find((m) => m.role === "tool")?.content).toBe("HI");
  });

  it("a last turn stopped at the output token limit is reported as cut at max tokens", async () => {
    model.script({ text: "half an ans", finishReason: "length" });
    const { result } = await loop(5);
    expect(result).toEqual({
      text: "half an ans",
      stoppedAtMaxSteps: false,
      cutAtMaxTokens: true,
      cutToolCalls: 0,
      modelId: "m",
    });
  });

  it("a turn cut at the output limit while it asked for tools runs none of them: recorded as not run, and the run fails saying so", async () => {
    let ran = 0;
    const counted: AgentTool = {
      ...upper,
      async execute(args, ctx) {
        ran += 1;
        return upper.execute(args, ctx);
      },
    };
    const cut = {
      toolCalls: [
        { name: "upper", args: { text: "whole" } },
        { name: "upper", args: { text: "hal" } },
      ],
      finishReason: "length",
    };
    model.script(cut);
    const { result, log } = await loop(5, [counted]);
    expect(result).toMatchObject({ cutAtMaxTokens: true, cutToolCalls: 2, stoppedAtMaxSteps: false });
    expect(log.calls).toEqual([
      { name: "upper", ms: 0, ok: false, error: NOT_RUN_CUT },
      { name: "upper", ms: 0, ok: false, error: NOT_RUN_CUT },
    ]);
    expect(ran).toBe(0);
    // The run: a failure with its record, not an "ok" run delivering an empty reply.
    model.script(cut);
    const failure = await runModel("openai", model.baseUrl, [counted]).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(AgentRunFailure);
    expect((failure as AgentRunFailure).message).toBe(
      "the model's answer was cut at agent.max_tokens (50 tokens) while it asked for 2 tool calls, which were not run — raise agent.max_tokens",
    );
    expect((failure as AgentRunFailure).record).toMatchObject({
      outcome: "error",
      steps: 1,
      toolCalls: [{ error: NOT_RUN_CUT }, { error: NOT_RUN_CUT }],
    });
    expect(ran).toBe(0);
  });

  // Seen: a turn DeepSeek cut off at insufficient_system_resource while it asked for tools had its calls run, the
  // last one's arguments possibly cut, as the SDK was told it asked for them (toolCallsFinishMiddleware).
  it("a turn the endpoint cut off (insufficient_system_resource) while it asked for tools runs none of them, as at max_tokens: recorded as not run naming the reason, and the run fails saying so", async () => {
    let ran = 0;
    const counted: AgentTool = {
      ...upper,
      async execute(args, ctx) {
        ran += 1;
        return upper.execute(args, ctx);
      },
    };
    const cut = {
      toolCalls: [
        { name: "upper", args: { text: "whole" } },
        { name: "upper", args: { text: "hal" } },
      ],
      finishReason: "insufficient_system_resource",
    };
    const why = notRunCutByEndpoint("insufficient_system_resource");
    expect(why).toBe(
      "not run: the endpoint cut the model's answer off (finish_reason insufficient_system_resource) while it asked for this call (its arguments may be incomplete)",
    );
    model.script(cut);
    const { result, log } = await loop(5, [counted]);
    expect(model.requests).toHaveLength(1);
    expect(result).toMatchObject({
      cutAtMaxTokens: false,
      cutByEndpoint: "insufficient_system_resource",
      cutToolCalls: 2,
      stoppedAtMaxSteps: false,
    });
    expect(log.calls).toEqual([
      { name: "upper", ms: 0, ok: false, error: why },
      { name: "upper", ms: 0, ok: false, error: why },
    ]);
    expect(ran).toBe(0);
    model.script(cut);
    const failure = await runModel("openai", model.baseUrl, [counted]).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(AgentRunFailure);
    expect((failure as AgentRunFailure).message).toBe(
      "the model's answer was cut off by the endpoint (finish_reason insufficient_system_resource) while it asked for 2 tool calls, which were not run — ask again; if it goes on, see the endpoint's documentation for that reason",
    );
    expect((failure as AgentRunFailure).record).toMatchObject({
      outcome: "error",
      steps: 1,
      toolCalls: [{ error: why }, { error: why }],
    });
    expect(ran).toBe(0);
    // Cut inside its only call's arguments: not asked again with a parse error either.
    model.requests.length = 0;
    model.script({ toolCalls: [{ name: "upper", args: '{"text": "hal' }], finishReason: cut.finishReason });
    const partial = await loop(5, [counted]);
    expect(model.requests).toHaveLength(1);
    expect(partial.log.calls).toEqual([{ name: "upper", ms: 0, ok: false, error: why }]);
  });

  it("a Messages API turn cut at the model's context window (model_context_window_exceeded) while it asked for a tool fails naming the context window, not max_tokens", async () => {
    const anthropic = await startFakeAnthropic();
    try {
      anthropic.script({
        toolCalls: [{ name: "upper", args: { text: "hal" } }],
        finishReason: "model_context_window_exceeded",
      });
      const failure = await runModel("anthropic", anthropic.baseUrl).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(AgentRunFailure);
      const message = (failure as AgentRunFailure).message;
      expect(message).toMatch(
        /^the model's answer was cut at the end of its context window \(stop_reason model_context_window_exceeded\) while it asked for a tool, which was not run — /,
      );
      expect(message).not.toMatch(/raise agent\.max_tokens/);
      expect((failure as AgentRunFailure).record).toMatchObject({
        outcome: "error",
        toolCalls: [{ name: "upper", ok: false, error: NOT_RUN_CUT_CONTEXT }],
      });
    } finally {
      await anthropic.close();
    }
  });

  it("a Messages API turn the API paused (stop_reason pause_turn) is sent back to go on, and the reply is the whole turn", async () => {
    const anthropic = await startFakeAnthropic();
    try {
      anthropic.script(
        { text: "The deploy failed because the ", finishReason: "pause_turn" },
        { text: "migration timed out. ", finishReason: "pause_turn" },
        { text: "Retry it after the lock clears." },
      );
      const { result, progress } = await loop(1, [upper], undefined, "native", {
        provider: "anthropic",
        baseUrl: anthropic.baseUrl,
      });
      expect(result.text).toBe(
        "The deploy failed because the migration timed out. Retry it after the lock clears.",
      );
      expect(result.stoppedAtMaxSteps).toBe(false);
      // One turn, the usage of its three calls.
      expect(progress).toEqual({ steps: 1, inputTokens: 30, outputTokens: 15 });
      const messages = (i: number) => anthropic.requests[i]?.json.messages as unknown[];
      expect(messages(1).at(-1)).toEqual({
        role: "assistant",
        content: [{ type: "text", text: "The deploy failed because the" }],
      });
      expect(messages(2).at(-1)).toEqual({
        role: "assistant",
        content: [
          { type: "text", text: "The deploy failed because the " },
          { type: "text", text: "migration timed out." },
        ],
      });
    } finally {
      await anthropic.close();
    }
  });

  it("a turn still paused after every continuation svc sends is delivered as it is, its record and line saying it was cut", async () => {
    const anthropic = await startFakeAnthropic();
    try {
      const paused = Array.from({ length: MAX_TURN_CONTINUATIONS + 2 }, (_, i) => ({
        text: `part ${i} `,
        finishReason: "pause_turn",
      }));
      anthropic.script(...paused, { text: "the end" });
      const reply = await runModel("anthropic", anthropic.baseUrl);
      // The first call and its continuations: the turn is what they wrote, not taken for a whole answer.
      expect(anthropic.requests).toHaveLength(MAX_TURN_CONTINUATIONS + 1);
      expect(reply.text).toBe("part 0 part 1 part 2 part 3 part 4 part 5 ");
      expect(reply.record).toMatchObject({ outcome: "ok", cut: "pause_turn" });
      expect(runLogLine("r", "d", reply.record as RunRecord)).toContain(
        `ok (reply cut short: the Messages API still paused the turn after ${MAX_TURN_CONTINUATIONS} continuations)`,
      );
    } finally {
      await anthropic.close();
    }
  });

  it("an answer cut at max_tokens before any text (a reasoning model's thinking used the limit) fails the run saying to raise max_tokens; one with text is delivered cut", async () => {
    const anthropic = await startFakeAnthropic();
    const run = (provider: "openai" | "anthropic", baseUrl: string) =>
      runModel(provider, baseUrl).catch((e: unknown) => e);
    try {
      model.script({ text: " ", finishReason: "length" }, { text: "half an ans", finishReason: "length" });
      anthropic.script({ finishReason: "max_tokens" });
      const cut =
        "the model's answer was cut at agent.max_tokens (50 tokens) before it wrote any text (a reasoning model can spend them all on its reasoning) — raise agent.max_tokens";
      for (const failure of [await run("openai", model.baseUrl), await run("anthropic", anthropic.baseUrl)]) {
        expect(failure).toBeInstanceOf(AgentRunFailure);
        expect((failure as AgentRunFailure).message).toBe(cut);
        expect((failure as AgentRunFailure).record).toMatchObject({ outcome: "error", steps: 1 });
      }
      expect(await run("openai", model.baseUrl)).toMatchObject({ text: "half an ans", cutAtMaxTokens: true });
    } finally {
      await anthropic.close();
    }
  });

  it("a reasoning model's thinking written into its text (<think>…</think>) is not the reply, goes back as reasoning_content, and a turn cut while it thought fails as one cut before any text", async () => {
    const run = () => runModel("openai", model.baseUrl).catch((e: unknown) => e);
    model.script(
      { text: "<think>\nThe user wants it upper-cased.\n</think>\n\n", ...callTool("upper", { text: "hi" }) },
      { text: "<think>Done, now answer.</think>\n\nIt is HI." },
      // As DeepSeek R1 writes it when its chat template opened the tag: the thinking and the closing tag.
      { text: "The template opened the tag.\n</think>\n\nThe build is green." },
      { text: "<think>\nLet me think about every file in the", finishReason: "length" },
    );
    expect(await run()).toMatchObject({ text: "It is HI." });
    const assistant = ((model.requests[1]?.json.messages ?? []) as Array<Record<string, unknown>>).find(
      (m) => m.role === "assistant",
    );
    expect(assistant).toMatchObject({ reasoning_content: "The user wants it upper-cased." });
    expect(JSON.stringify(model.requests[1]?.json.messages)).not.toContain("<think>");
    expect(await run()).toMatchObject({ text: "The build is green." });
    const cut = await run();
    expect(cut).toBeInstanceOf(AgentRunFailure);
    expect((cut as AgentRunFailure).message).toBe(
      "the model's answer was cut at agent.max_tokens (50 tokens) before it wrote any text (a reasoning model can spend them all on its reasoning) — raise agent.max_tokens",
    );
  });

  it("thinking a Messages API server left in its text (<think>…</think>, as vLLM's and llama.cpp's /v1/messages write it without a reasoning parser) is not the reply, goes back as a thinking block, and a turn cut while it thought fails as one cut before any text", async () => {
    const anthropic = await startFakeAnthropic();
    const run = () => runModel("anthropic", anthropic.baseUrl).catch((e: unknown) => e);
    try {
      anthropic.script(
        {
          text: "<think>\nThe user wants it upper-cased.\n</think>\n\n",
          ...callTool("upper", { text: "hi" }),
        },
        { text: "<think>Done, now answer.</think>\n\nIt is HI." },
        { text: "The template opened the tag.\n</think>\n\nThe build is green." },
        { text: "<think>\nLet me think about every file in the", finishReason: "max_tokens" },
      );
      expect(await run()).toMatchObject({ text: "It is HI." });
      const assistant = ((anthropic.requests[1]?.json.messages ?? []) as Array<Record<string, unknown>>).find(
        (m) => m.role === "assistant",
      );
      expect(assistant?.content).toEqual([
        { type: "thinking", thinking: "The user wants it upper-cased.", signature: "" },
        { type: "tool_use", id: "toolu_0_0", name: "upper", input: { text: "hi" } },
      ]);
      expect(await run()).toMatchObject({ text: "The build is green." });
      const cut = await run();
      expect(cut).toBeInstanceOf(AgentRunFailure);
      expect((cut as AgentRunFailure).message).toBe(
        "the model's answer was cut at agent.max_tokens (50 tokens) before it wrote any text (a reasoning model can spend them all on its reasoning) — raise agent.max_tokens",
      );
    } finally {
      await anthropic.close();
    }
  });

  it("an answer the endpoint's safety system stopped (content_filter, stop_reason refusal) fails the run naming it, not delivered as a finished reply", async () => {
    const anthropic = await startFakeAnthropic();
    try {
      model.script({ text: "Here is how to", finishReason: "content_filter" });
      anthropic.script({ finishReason: "refusal" });
      const failures = [];
      for (const [provider, baseUrl] of [
        ["openai", model.baseUrl],
        ["anthropic", anthropic.baseUrl],
      ] as const)
        failures.push(await runModel(provider, baseUrl).catch((e: unknown) => e));
      expect(failures[0]).toBeInstanceOf(AgentRunFailure);
      expect((failures[0] as AgentRunFailure).message).toBe(
        "the endpoint's content filter stopped the model's answer (finish_reason content_filter) — the run has no reply to deliver: change what the route's prompt or agent.system_prompt asks for, or use another agent.model than \"m\"; on Azure OpenAI, the deployment's content filter decides",
      );
      expect((failures[0] as AgentRunFailure).record).toMatchObject({ outcome: "error", steps: 1 });
      expect(failures[1]).toBeInstanceOf(AgentRunFailure);
      expect((failures[1] as AgentRunFailure).message).toMatch(
        /^the model refused to answer \(stop_reason refusal\) — the run has no reply to deliver: .* another agent\.model than "m"$/,
      );
    } finally {
      await anthropic.close();
    }
  });

  it("the calls of a turn the content filter stopped are not run and are recorded as such", async () => {
    model.script({ toolCalls: [{ name: "upper", args: { text: "a" } }], finishReason: "content_filter" });
    const { result, log } = await loop(5);
    expect(result.filtered).toEqual({ reason: "content_filter" });
    expect(result.cutToolCalls).toBe(0);
    expect(log.calls).toEqual([
      {
        name: "upper",
        ms: 0,
        ok: false,
        error:
          "not run: the endpoint's safety system stopped the model's answer while it asked for this call",
      },
    ]);
  });

  it("a turn cut at max_tokens, or stopped by the content filter, inside its only call's arguments (not JSON yet) ends the loop: the call is recorded as not run, and the model is not asked again with a parse error", async () => {
    // What a cut leaves most often: the arguments' text stops mid-way, so it does not parse.
    for (const [finishReason, why] of [
      ["length", NOT_RUN_CUT],
      ["content_filter", NOT_RUN_FILTERED],
    ] as const) {
      model.requests.length = 0;
      // A second turn, if the model were asked again, would be the fake's "(script ended)".
      model.script({ toolCalls: [{ name: "upper", args: '{"text": "hal' }], finishReason });
      const { result, log } = await loop(5);
      expect(model.requests).toHaveLength(1);
      expect(result.text).toBe("");
      expect(log.calls).toEqual([{ name: "upper", ms: 0, ok: false, error: why }]);
      if (finishReason === "length") expect(result).toMatchObject({ cutAtMaxTokens: true, cutToolCalls: 1 });
      else expect(result.filtered).toEqual({ reason: "content_filter" });
    }
  });

  it("an OpenAI refusal the model wrote (the refusal field, finish_reason stop) is its reply", async () => {
    model.script({ refusal: "I can't help with that." });
    const { result } = await loop(5);
    expect(result.text).toBe("I can't help with that.");
    expect(result.filtered).toBeUndefined();
  });

  it("a refusal a server writes into the text as well (content and refusal both set) is the reply once, not twice run together", async () => {
    model.script(
      { text: "I can't help with that.", refusal: "I can't help with that." },
      { text: "Here is what I can say.", refusal: "I can't help with all of it." },
    );
    expect((await loop(5)).result.text).toBe("I can't help with that.");
    expect((await loop(5)).result.text).toBe("Here is what I can say.");
  });

  it("arguments a model wrote double-encoded (the object's JSON text inside a JSON string) are read as that object, for either provider, and go back so", async () => {
    const anthropic = await startFakeAnthropic();
    const run = runModel;
    try {
      const doubled = JSON.stringify(JSON.stringify({ text: "hi" }));
      model.script({ toolCalls: [{ name: "upper", args: doubled }] }, { text: "done" });
      anthropic.script({ toolCalls: [{ name: "upper", args: doubled }] }, { text: "done" });
      for (const reply of [await run("openai", model.baseUrl), await run("anthropic", anthropic.baseUrl)])
        expect(reply).toMatchObject({ text: "done", record: { toolCalls: [{ name: "upper", ok: true }] } });
      const chat = model.requests[1]?.json.messages as Array<Record<string, unknown>>;
      expect(chat.find((m) => m.role === "tool")?.content).toBe("HI");
      expect(chat.find((m) => m.role === "assistant")?.tool_calls).toMatchObject([
        { function: { name: "upper", arguments: '{"text":"hi"}' } },
      ]);
      const messages = JSON.stringify(anthropic.requests[1]?.json.messages);
      expect(messages).toContain('"input":{"text":"hi"}');
      expect(messages).toContain('"content":"HI"');
    } finally {
      await anthropic.close();
    }
  });

  it("tool calls in other servers' shapes (arguments as a JSON object, the legacy function_call) run, where the SDK refused the answer or dropped the call", async () => {
    model.script(
      { toolCalls: [{ name: "upper", args: { text: "hi" }, argumentsAsObject: true }] },
      { toolCalls: [{ name: "upper", args: { text: "yo" } }], legacyFunctionCall: true },
      { text: "done" },
    );
    const { result, log } = await loop(5);
    expect(result.text).toBe("done");
    expect(log.calls).toMatchObject([
      { name: "upper", ok: true },
      { name: "upper", ok: true },
    ]);
    // Each call went back to the model with its arguments as text, as Chat Completions takes them.
    const sent = JSON.stringify(model.requests.at(-1)?.json.messages);
    expect(sent).toContain(JSON.stringify(JSON.stringify({ text: "hi" })));
    expect(sent).toContain(JSON.stringify(JSON.stringify({ text: "yo" })));
  });

  it("an answer labelled text/plain (Go's type for a body written without one) or with no type is read as JSON: its calls in other servers' shapes run", async () => {
    const answer = (content: string | null, calls?: unknown[]) =>
      JSON.stringify({
        id: "chatcmpl-plain",
        object: "chat.completion",
        model: "test-model",
        choices: [
          {
            index: 0,
            message: { role: "assistant", content, ...(calls === undefined ? {} : { tool_calls: calls }) },
            finish_reason: calls === undefined ? "stop" : "tool_calls",
          },
        ],
      });
    const call = {
      id: "call_plain",
      type: "function",
      function: { name: "upper", arguments: { text: "hi" } },
    };
    model.script(
      { status: 200, headers: { "content-type": "text/plain; charset=utf-8" }, body: answer(null, [call]) },
      { status: 200, headers: { "content-type": "" }, body: answer(null, [{ ...call, id: "call_none" }]) },
      { text: "done" },
    );
    const { result, log } = await loop(5);
    expect(result.text).toBe("done");
    expect(log.calls).toMatchObject([
      { name: "upper", ok: true },
      { name: "upper", ok: true },
    ]);
    expect(JSON.stringify(model.requests.at(-1)?.json.messages)).toContain(
      JSON.stringify(JSON.stringify({ text: "hi" })),
    );
  });

  it("a call whose arguments a server writes as null, or leaves out, is a tool error (null) or runs with {} (none); the run goes on", async () => {
    let got: unknown[] = [];
    const noArgs: AgentTool = {
      ...upper,
      name: "ping",
      inputSchema: { type: "object", properties: {} },
      async execute(args) {
        got = [...got, args];
        return { ok: true, content: [{ type: "text", text: "pong" }] };
      },
    };
    model.script(
      {
        toolCalls: [
          { name: "ping", args: null, argumentsAsObject: true },
          { name: "ping", args: undefined, argumentsAsObject: true },
        ],
      },
      { text: "after" },
    );
    const { result, log } = await loop(5, [noArgs]);
    expect(result.text).toBe("after");
    expect(log.calls).toMatchObject([{ name: "ping" }, { name: "ping", ok: true }]);
    expect(got.at(-1)).toEqual({});
  });

  it("a server that refuses the reasoning sent back with an earlier turn (Groq: reasoning_content is unsupported) gets the turn again without it", async () => {
    const groq = await startFakeOpenAI();
    try {
      const refusal = {
        error: {
          message:
            "'messages.1' : for 'role:assistant' the following must be satisfied[('messages.1' : property 'reasoning_content' is unsupported)]",
          type: "invalid_request_error",
        },
      };
      groq.script(
        { ...callTool("upper", { text: "hi" }), reasoning: "I should upper-case it" },
        { status: 400, body: JSON.stringify(refusal) },
        { text: "HI it is" },
      );
      const { result, log } = await loop(5, [upper], undefined, "described", {
        provider: "openai",
        baseUrl: groq.baseUrl,
      });
      expect(result.text).toBe("HI it is");
      expect(log.calls).toMatchObject([{ name: "upper", ok: true }]);
      const assistant = (r: number) =>
        ((groq.requests[r]?.json.messages ?? []) as Array<Record<string, unknown>>).find(
          (m) => m.role === "assistant",
        );
      expect(assistant(1)).toHaveProperty("reasoning_content", "I should upper-case it");
      expect(assistant(2)).not.toHaveProperty("reasoning_content");
      expect(assistant(2)).toHaveProperty("tool_calls");
    } finally {
      await groq.close();
    }
  });

  it("Mistral's 422 for the reasoning sent back (a Magistral model's thinking: extra_forbidden) gets the turn again without it", async () => {
    const mistral = await startFakeOpenAI();
    try {
      const refusal = {
        object: "error",
        message: {
          detail: [
            {
              type: "extra_forbidden",
              loc: ["body", "messages", 1, "assistant", "reasoning_content"],
              msg: "Extra inputs are not permitted",
              input: "I should upper-case it",
            },
          ],
        },
        type: "invalid_request_error",
        param: null,
        code: null,
      };
      mistral.script(
        { ...callTool("upper", { text: "hi" }), reasoning: "I should upper-case it" },
        { status: 422, body: JSON.stringify(refusal) },
        { text: "HI it is" },
      );
      const { result, log } = await loop(5, [upper], undefined, "described", {
        provider: "openai",
        baseUrl: mistral.baseUrl,
      });
      expect(result.text).toBe("HI it is");
      expect(log.calls).toMatchObject([{ name: "upper", ok: true }]);
      const assistant = (r: number) =>
        ((mistral.requests[r]?.json.messages ?? []) as Array<Record<string, unknown>>).find(
          (m) => m.role === "assistant",
        );
      expect(assistant(1)).toHaveProperty("reasoning_content", "I should upper-case it");
      expect(assistant(2)).not.toHaveProperty("reasoning_content");
    } finally {
      await mistral.close();
    }
  });

  it("a turn with tool calls and a finish reason the SDK does not know (TGI's eos_token) runs its tools and the loop goes on", async () => {
    model.script({ ...callTool("upper", { text: "hi" }), finishReason: "eos_token" }, { text: "HI it is" });
    const { result, log } = await loop(5);
    expect(result.text).toBe("HI it is");
    expect(log.calls).toEqual([{ name: "upper", ms: 5, ok: true }]);
  });

  it("a turn with tool calls and no finish reason (null, or left out, as some servers answer) runs its tools once and the loop goes on", async () => {
    const answer = (finish: Record<string, unknown>, id: string) => ({
      status: 200,
      body: JSON.stringify({
        id: "c",
        object: "chat.completion",
        created: 1_700_000_000,
        model: "m",
        choices: [
          {
            index: 0,
            message: {
              role: "assistant",
              content: null,
              tool_calls: [{ id, type: "function", function: { name: "upper", arguments: '{"text":"hi"}' } }],
            },
            ...finish,
          },
        ],
      }),
    });
    model.script(answer({ finish_reason: null }, "a"), answer({}, "b"), { text: "HI it is" });
    const { result, log } = await loop(5);
    expect(result.text).toBe("HI it is");
    expect(log.calls).toEqual([
      { name: "upper", ms: 5, ok: true },
      { name: "upper", ms: 5, ok: true },
    ]);
    expect(model.requests).toHaveLength(3);
  });

  it("a turn's calls are recorded in the order the model asked for them, not in the order they finished", async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    // "slow" finishes only after "upper" has: as parallel calls to two servers do.
    const slow: AgentTool = {
      ...upper,
      name: "slow",
      async execute() {
        await gate;
        return { ok: true, content: [{ type: "text", text: "late" }] };
      },
    };
    const fast: AgentTool = {
      ...upper,
      async execute(args, ctx) {
        const outcome = await upper.execute(args, ctx);
        release();
        return outcome;
      },
    };
    model.script(
      {
        toolCalls: [
          { name: "slow", args: {} },
          { name: "nowhere", args: {} },
          { name: "upper", args: { text: "a" } },
          { name: "upper", args: "{broken" },
        ],
      },
      { text: "done" },
    );
    const { log } = await loop(5, [slow, fast]);
    expect(log.calls.map((c) => [c.name, c.ok])).toEqual([
      ["slow", true],
      ["nowhere", false],
      ["upper", true],
      ["upper", false],
    ]);
  });

  it("calls a server gives one id (the same in a turn, or again in a later turn) each run, are sent back with their own arguments and all recorded", async () => {
    // As Xinference does: every call of a turn has the completion's id; and a later turn repeats it.
    model.script(
      {
        toolCalls: [
          { name: "upper", args: { text: "a" }, id: "same" },
          { name: "upper", args: { text: "b" }, id: "same" },
        ],
      },
      { toolCalls: [{ name: "upper", args: { text: "c" }, id: "same" }] },
      { toolCalls: [{ name: "upper", args: { text: "d" }, id: "" }] },
      { text: "done" },
    );
    const { result, log } = await loop(5);
    expect(result.text).toBe("done");
    expect(log.calls.map((c) => [c.name, c.ok])).toEqual([
      ["upper", true],
      ["upper", true],
      ["upper", true],
      ["upper", true],
    ]);
    type Sent = {
      role: string;
      content: unknown;
      tool_call_id?: string;
      tool_calls?: Array<{ id: string; function: { arguments: string } }>;
    };
    const last = model.requests[3]?.json.messages as Sent[];
    const calls = last.flatMap((m) => m.tool_calls ?? []);
    expect(calls.map((c) => JSON.parse(c.function.arguments).text)).toEqual(["a", "b", "c", "d"]);
    // The first keeps the server's id; every id is the run's only one, and each result answers its call.
    expect(calls[0]?.id).toBe("same");
    expect(new Set(calls.map((c) => c.id)).size).toBe(4);
    const results = last.filter((m) => m.role === "tool");
    expect(results.map((m) => [m.tool_call_id, m.content])).toEqual(calls.map((c, i) => [c.id, "ABCD"[i]]));
  });

  it("the run's secrets are taken out of a tool's result and error before the model or the log sees them", async () => {
    model.script(
      {
        toolCalls: [
          { name: "echo", args: { text: "sk-SECRET-1" } },
          { name: "echo", args: { text: "sk-SECRET-1", fail: true } },
        ],
      },
      { text: "done" },
    );
    const { log } = await loop(5, [echo], (text) => text.replaceAll("sk-SECRET-1", "[redacted]"));
    const second = model.requests[1]?.json.messages as Array<{ role: string; content: unknown }>;
    const toolTexts = second.filter((m) => m.role === "tool").map((m) => String(m.content));
    expect(toolTexts).toHaveLength(2);
    expect(toolTexts.join("\n")).not.toContain("sk-SECRET-1");
    expect(toolTexts.join("\n")).toContain("you said [redacted]");
    expect(toolTexts.join("\n")).toContain("boom key=[redacted]");
    expect(JSON.stringify(log.calls)).not.toContain("sk-SECRET-1");
  });

  it("an image a tool returns reaches a Messages API model as an image block", async () => {
    const anthropic = await startFakeAnthropic();
    const shot = png(640, 480);
    const pngShot: AgentTool = {
      ...screenshot,
      async execute() {
        return {
          ok: true,
          content: [
            { type: "text", text: "here it is" },
            { type: "image", data: shot, mimeType: "image/png" },
          ],
        };
      },
    };
    try {
      anthropic.script(callTool("screenshot"), { text: "seen" });
      const { result } = await loop(5, [pngShot], undefined, "native", {
        provider: "anthropic",
        baseUrl: anthropic.baseUrl,
      });
      expect(result.text).toBe("seen");
      const messages = anthropic.requests[1]?.json.messages as Array<{ role: string; content: unknown }>;
      const results = messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])) as Array<{
        type: string;
        content?: unknown;
      }>;
      const toolResult = results.find((c) => c.type === "tool_result");
      expect(toolResult?.content).toEqual([
        { type: "text", text: "here it is" },
        { type: "image", source: { type: "base64", media_type: "image/png", data: shot } },
      ]);
    } finally {
      await anthropic.close();
    }
  });

  it("half of an emoji in a tool's text or the prompt reaches the model as U+FFFD, not as a lone surrogate the Messages API refuses", async () => {
    // A JavaScript MCP server that cuts its text with slice(), and a payload whose title was cut the same way.
    const cutter: AgentTool = {
      ...upper,
      name: "cutter",
      async execute() {
        return { ok: true, content: [{ type: "text", text: "cut here \ud83d" }] };
      },
    };
    const anthropic = await startFakeAnthropic();
    try {
      anthropic.script(callTool("cutter"), { text: "seen" });
      const { result } = await loop(5, [cutter], undefined, "native", {
        provider: "anthropic",
        baseUrl: anthropic.baseUrl,
      });
      expect(result.text).toBe("seen");
      expect(JSON.stringify(anthropic.requests[1]?.json.messages)).toContain("cut here \ufffd");
    } finally {
      await anthropic.close();
    }
    model.script({ text: "fine" });
    const runner = languageModel({ provider: "openai", model: "m", base_url: model.baseUrl });
    const progress: LoopProgress = { steps: 0, inputTokens: 0, outputTokens: 0 };
    const answer = await runToolLoop(
      {
        model: runner,
        prompt: "Issue: \udc00 left \ud83d\ude00 whole",
        tools: {},
        maxSteps: 1,
        maxTokens: 10,
        signal: context.signal,
        log: new ToolCallLog(),
      },
      progress,
    );
    expect(answer.text).toBe("fine");
    const sent = model.requests.at(-1)?.json.messages as Array<{ content: string }>;
    expect(sent[0]?.content).toBe("Issue: \ufffd left \ud83d\ude00 whole");
  });

  it("a tool schema with anyOf at its top level (refused by the Messages API) is offered with the branches' properties, the rule in its description", async () => {
    // As Notion's notion-create-attachment and codebase-memory's check_index_coverage publish them.
    const attach: AgentTool = {
      ...upper,
      name: "attach",
      description: "Attaches a file",
      inputSchema: {
        type: "object",
        properties: { page: { type: "string" } },
        required: ["page"],
        anyOf: [
          { properties: { url: { type: "string" } }, required: ["url"] },
          { properties: { content: { type: "string" } }, required: ["content"] },
        ],
      },
      async execute(args) {
        return { ok: true, content: [{ type: "text", text: `attached ${JSON.stringify(args)}` }] };
      },
    };
    const anthropic = await startFakeAnthropic();
    try {
      anthropic.script(callTool("attach", { page: "p", url: "u" }), { text: "attached" });
      const { result, log } = await loop(5, [attach], undefined, "native", {
        provider: "anthropic",
        baseUrl: anthropic.baseUrl,
      });
      expect(result.text).toBe("attached");
      expect(log.calls).toEqual([{ name: "attach", ms: 5, ok: true }]);
      const sentTools = (anthropic.requests[0]?.json.tools ?? []) as Array<{
        description: string;
        input_schema: Record<string, unknown>;
      }>;
      const offered = sentTools[0];
      expect(offered?.input_schema).toEqual({
        type: "object",
        properties: { page: { type: "string" }, url: { type: "string" }, content: { type: "string" } },
        required: ["page"],
      });
      expect(offered?.description).toContain("Attaches a file");
      expect(offered?.description).toContain('must also match {"anyOf":[{"properties"');
    } finally {
      await anthropic.close();
    }
  });

  it("argument names the Messages API refuses (filter[id], $top, a space) are offered renamed, and the tool gets its own names", async () => {
    // As MCP servers built from REST APIs name them (App Store Connect's filter[bundleId], OData's $top).
    const list: AgentTool = {
      ...upper,
      name: "list_apps",
      inputSchema: {
        type: "object",
        properties: {
          "filter[id]": { type: "string" },
          filter_id_: { type: "string", description: "already this name" },
          $top: { type: "number" },
          "Account Number": { type: "string" },
          page: { type: "number" },
        },
        required: ["filter[id]", "page"],
      },
      async execute(args) {
        return { ok: true, content: [{ type: "text", text: `listed ${JSON.stringify(args)}` }] };
      },
    };
    const anthropic = await startFakeAnthropic();
    try {
      anthropic.script(
        callTool("list_apps", { filter_id__2: "42", _top: 5, Account_Number: "a1", page: 1 }),
        { text: "listed" },
      );
      const { result, log } = await loop(5, [list], undefined, "native", {
        provider: "anthropic",
        baseUrl: anthropic.baseUrl,
      });
      expect(result.text).toBe("listed");
      expect(log.calls).toEqual([{ name: "list_apps", ms: 5, ok: true }]);
      const sent = (anthropic.requests[0]?.json.tools ?? []) as Array<{
        input_schema: Record<string, unknown>;
      }>;
      expect(Object.keys(sent[0]?.input_schema.properties as object)).toEqual([
        "filter_id__2",
        "filter_id_",
        "_top",
        "Account_Number",
        "page",
      ]);
      expect(sent[0]?.input_schema.required).toEqual(["filter_id__2", "page"]);
      const blocks = ((anthropic.requests[1]?.json.messages ?? []) as Array<{ content: unknown }>).flatMap(
        (m) => (Array.isArray(m.content) ? (m.content as Array<{ type: string; content?: unknown }>) : []),
      );
      expect(blocks.find((b) => b.type === "tool_result")?.content).toBe(
        'listed {"filter[id]":"42","$top":5,"Account Number":"a1","page":1}',
      );
    } finally {
      await anthropic.close();
    }
  });

  it('a call whose arguments are JSON but no object (null, [], "x") is refused, and sent back with {} (vLLM and SGLang refuse the history otherwise)', async () => {
    model.script(
      {
        toolCalls: [
          { name: "upper", args: "null" },
          { name: "upper", args: "[]" },
          { name: "upper", args: '"x"' },
          { name: "upper", args: { text: "ok" } },
        ],
      },
      { text: "done" },
    );
    const { result, log } = await loop(5);
    expect(result.text).toBe("done");
    expect(log.calls.map((call) => call.ok)).toEqual([false, false, false, true]);
    const sent = model.requests[1]?.json.messages as Array<{
      role: string;
      tool_calls?: Array<{ function: { arguments: string } }>;
    }>;
    const calls = sent.find((m) => m.role === "assistant")?.tool_calls ?? [];
    expect(calls.map((call) => call.function.arguments)).toEqual(["{}", "{}", "{}", '{"text":"ok"}']);
  });

  it("a call whose arguments nest deeper than 100 levels is refused, and sent back with {}: the run goes on (the AI SDK's structuredClone and JSON.stringify would throw)", async () => {
    const nested = (levels: number) => `{"text":"deep","tree":${"[".repeat(levels)}${"]".repeat(levels)}}`;
    model.script(
      {
        toolCalls: [
          { name: "upper", args: nested(20_000) },
          { name: "upper", args: nested(100) },
          { name: "upper", args: nested(99) },
        ],
      },
      { text: "done" },
    );
    const { result, log } = await loop(5);
    expect(result.text).toBe("done");
    expect(log.calls).toEqual([
      {
        name: "upper",
        ms: 0,
        ok: false,
        error: "arguments nest objects or arrays deeper than 100 levels; the tool was not run",
      },
      {
        name: "upper",
        ms: 0,
        ok: false,
        error: "arguments nest objects or arrays deeper than 100 levels; the tool was not run",
      },
      { name: "upper", ms: 5, ok: true },
    ]);
    const sent = model.requests[1]?.json.messages as Array<{
      role: string;
      content?: unknown;
      tool_calls?: Array<{ function: { arguments: string } }>;
    }>;
    const calls = sent.find((m) => m.role === "assistant")?.tool_calls ?? [];
    expect(calls.map((call) => call.function.arguments)).toEqual(["{}", "{}", nested(99)]);
    expect(sent.filter((m) => m.role === "tool").map((m) => m.content)).toEqual([
      "arguments nest objects or arrays deeper than 100 levels; the tool was not run",
      "arguments nest objects or arrays deeper than 100 levels; the tool was not run",
      "DEEP",
    ]);
  }, 60_000);

  it("a call whose arguments a server writes as a JSON object nested deeper than 100 levels is refused the same way: the run goes on", async () => {
    model.script(
      {
        toolCalls: [
          {
            name: "upper",
            args: `{"text":"deep","tree":${"[".repeat(20_000)}${"]".repeat(20_000)}}`,
            argumentsAsObject: true,
            rawObject: true,
          },
          { name: "upper", args: { text: "flat" }, argumentsAsObject: true },
        ],
      },
      { text: "done" },
    );
    const { result, log } = await loop(5);
    expect(result.text).toBe("done");
    expect(log.calls).toEqual([
      {
        name: "upper",
        ms: 0,
        ok: false,
        error: "arguments nest objects or arrays deeper than 100 levels; the tool was not run",
      },
      { name: "upper", ms: 5, ok: true },
    ]);
    const sent = model.requests[1]?.json.messages as Array<{
      role: string;
      tool_calls?: Array<{ function: { arguments: string } }>;
    }>;
    const calls = sent.find((m) => m.role === "assistant")?.tool_calls ?? [];
    expect(calls.map((call) => call.function.arguments)).toEqual(["{}", '{"text":"flat"}']);
  }, 60_000);

  it("a Messages API tool_use whose input nests deeper than 100 levels is refused the same way: the run goes on", async () => {
    const anthropic = await startFakeAnthropic();
    try {
      anthropic.script(
        {
          toolCalls: [
            {
              name: "upper",
              args: `{"text":"deep","tree":${"[".repeat(20_000)}${"]".repeat(20_000)}}`,
              rawObject: true,
            },
            { name: "upper", args: { text: "flat" } },
          ],
        },
        { text: "done" },
      );
      const { result, log } = await loop(5, [upper], undefined, "native", {
        provider: "anthropic",
        baseUrl: anthropic.baseUrl,
      });
      expect(result.text).toBe("done");
      expect(log.calls).toEqual([
        {
          name: "upper",
          ms: 0,
          ok: false,
          error: "arguments nest objects or arrays deeper than 100 levels; the tool was not run",
        },
        { name: "upper", ms: 5, ok: true },
      ]);
      const sent = anthropic.requests[1]?.json.messages as Array<{
        role: string;
        content: Array<{ type: string; input?: unknown }>;
      }>;
      const uses = sent.flatMap((m) => m.content).filter((part) => part.type === "tool_use");
      expect(uses.map((part) => part.input)).toEqual([{}, { text: "flat" }]);
    } finally {
      await anthropic.close();
    }
  }, 60_000);

  it("a tool call's Gemini thought signature is sent back with the call (Gemini 3 refuses the next turn without it)", async () => {
    model.script(
      {
        toolCalls: [
          { name: "upper", args: { text: "a" }, thoughtSignature: "c2lnLWE=" },
          { name: "upper", args: { text: "b" } },
        ],
      },
      { text: "done" },
    );
    const { result } = await loop(5);
    expect(result.text).toBe("done");
    const sent = model.requests[1]?.json.messages as Array<{ role: string; tool_calls?: unknown[] }>;
    expect(sent.find((m) => m.role === "assistant")?.tool_calls).toEqual([
      {
        id: expect.any(String),
        type: "function",
        function: { name: "upper", arguments: '{"text":"a"}' },
        extra_content: { google: { thought_signature: "c2lnLWE=" } },
      },
      { id: expect.any(String), type: "function", function: { name: "upper", arguments: '{"text":"b"}' } },
    ]);
  });

  it("a tool schema without properties (refused by OpenAI) is offered with properties: {}", async () => {
    // As mcp-go lists a tool without arguments (GitHub's get_me).
    const me: AgentTool = {
      ...upper,
      name: "get_me",
      inputSchema: { type: "object" },
      async execute(args) {
        return { ok: true, content: [{ type: "text", text: `me ${JSON.stringify(args)}` }] };
      },
    };
    model.script(callTool("get_me", {}), { text: "it is me" });
    const { result, log } = await loop(5, [me]);
    expect(result.text).toBe("it is me");
    expect(log.calls).toEqual([{ name: "get_me", ms: 5, ok: true }]);
    const sent = model.requests[0]?.json.tools as Array<{ function: { parameters: unknown } }>;
    expect(sent[0]?.function.parameters).toEqual({ type: "object", properties: {} });
  });

  it("a tool schema with not at its top level (refused by OpenAI) is offered without it, quoted in the description", async () => {
    // A hand-written schema making two arguments exclusive.
    const find: AgentTool = {
      ...upper,
      name: "find",
      inputSchema: {
        type: "object",
        properties: { id: { type: "string" }, title: { type: "string" } },
        not: { required: ["id", "title"] },
      },
      async execute(args) {
        return { ok: true, content: [{ type: "text", text: `found ${JSON.stringify(args)}` }] };
      },
    };
    model.script(callTool("find", { id: "note-7" }), { text: "found it" });
    const { result, log } = await loop(5, [find]);
    expect(result.text).toBe("found it");
    expect(log.calls).toEqual([{ name: "find", ms: 5, ok: true }]);
    const sent = model.requests[0]?.json.tools as Array<{
      function: { parameters: Record<string, unknown>; description: string };
    }>;
    expect(sent[0]?.function.parameters).not.toHaveProperty("not");
    expect(sent[0]?.function.description).toContain(
      'The arguments must also match {"not":{"required":["id","title"]}}',
    );
  });

  it("tuples as pydantic (prefixItems only) and zod-to-json-schema (items as a list) write them, refused by OpenAI, are offered with items", async () => {
    const locate: AgentTool = {
      ...upper,
      name: "locate",
      inputSchema: {
        type: "object",
        properties: {
          lat_long: { type: "array", prefixItems: [{ type: "number" }, { type: "number" }], minItems: 2 },
          pages: { type: "array", items: [{ type: "integer" }, { type: "integer" }], maxItems: 2 },
        },
      },
      async execute(args) {
        return { ok: true, content: [{ type: "text", text: `at ${JSON.stringify(args)}` }] };
      },
    };
    model.script(callTool("locate", { lat_long: [52.5, 13.4], pages: [1, 3] }), { text: "located" });
    const { result, log } = await loop(5, [locate]);
    expect(result.text).toBe("located");
    expect(log.calls).toEqual([{ name: "locate", ms: 5, ok: true }]);
    const sent = model.requests[0]?.json.tools as Array<{ function: { parameters: unknown } }>;
    expect(sent[0]?.function.parameters).toMatchObject({
      properties: {
        lat_long: { prefixItems: [{ type: "number" }, { type: "number" }], items: {} },
        pages: { prefixItems: [{ type: "integer" }, { type: "integer" }], items: {} },
      },
    });
  });

  it("a tool schema with an array without items (refused by OpenAI) is offered with items: {}", async () => {
    // As mcp-go's WithArray writes it without an item type.
    const tag: AgentTool = {
      ...upper,
      name: "tag",
      inputSchema: { type: "object", properties: { labels: { type: "array", description: "labels" } } },
      async execute(args) {
        return { ok: true, content: [{ type: "text", text: `tagged ${JSON.stringify(args)}` }] };
      },
    };
    model.script(callTool("tag", { labels: ["a"] }), { text: "tagged" });
    const { result } = await loop(5, [tag]);
    expect(result.text).toBe("tagged");
    const sent = model.requests[0]?.json.tools as Array<{ function: { parameters: unknown } }>;
    expect(sent[0]?.function.parameters).toMatchObject({
      properties: { labels: { type: "array", description: "labels", items: {} } },
    });
  });

  it("an image of a type the Messages API refuses is named in text, and the run goes on", async () => {
    const anthropic = await startFakeAnthropic();
    const diagram: AgentTool = {
      ...screenshot,
      name: "diagram",
      async execute() {
        return { ok: true, content: [{ type: "image", data: PIXEL, mimeType: "image/svg+xml" }] };
      },
    };
    try {
      anthropic.script(callTool("diagram"), { text: "seen" });
      const { result } = await loop(5, [diagram], undefined, "native", {
        provider: "anthropic",
        baseUrl: anthropic.baseUrl,
      });
      expect(result.text).toBe("seen");
      expect(JSON.stringify(anthropic.requests[1]?.json.messages)).toContain(
        "[image: image/svg+xml, 14 bytes — not shown: the model takes JPEG, PNG, GIF and WebP images of at most 5 MB and 8000 pixels a side]",
      );
    } finally {
      await anthropic.close();
    }
  });

  it("an image typed image/jpg or in capitals (image/PNG), as servers write them, is sent with the type the Messages API takes", async () => {
    const anthropic = await startFakeAnthropic();
    const photos: AgentTool = {
      ...screenshot,
      name: "photos",
      async execute() {
        return {
          ok: true,
          content: [
            { type: "image", data: JPEG, mimeType: "image/jpg" },
            { type: "image", data: png(640, 480), mimeType: "image/PNG" },
            { type: "image", data: WEBP, mimeType: " Image/WebP " },
          ],
        };
      },
    };
    try {
      anthropic.script(callTool("photos"), { text: "seen" });
      const { result } = await loop(5, [photos], undefined, "native", {
        provider: "anthropic",
        baseUrl: anthropic.baseUrl,
      });
      expect(result.text).toBe("seen");
      const sent = JSON.stringify(anthropic.requests[1]?.json.messages);
      expect([...sent.matchAll(/"media_type":"([^"]*)"/g)].map((m) => m[1])).toEqual([
        "image/jpeg",
        "image/png",
        "image/webp",
      ]);
    } finally {
      await anthropic.close();
    }
  });

  it("an image whose bytes are another type than its label (a JPEG sent as image/png) is sent under the type its bytes show: the Messages API refuses a mislabelled one", async () => {
    const anthropic = await startFakeAnthropic();
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0]).toString("base64");
    const shots: AgentTool = {
      ...screenshot,
      name: "shots",
      async execute() {
        return {
          ok: true,
          content: [
            { type: "image", data: jpeg, mimeType: "image/png" },
            { type: "image", data: png(640, 480), mimeType: "image/jpeg" },
            { type: "image", data: png(640, 480), mimeType: "application/octet-stream" },
          ],
        };
      },
    };
    try {
      anthropic.script(callTool("shots"), { text: "seen" });
      const { result } = await loop(5, [shots], undefined, "native", {
        provider: "anthropic",
        baseUrl: anthropic.baseUrl,
      });
      expect(result.text).toBe("seen");
      const sent = JSON.stringify(anthropic.requests[1]?.json.messages);
      expect([...sent.matchAll(/"media_type":"([^"]*)"/g)].map((m) => m[1])).toEqual([
        "image/jpeg",
        "image/png",
        "image/png",
      ]);
    } finally {
      await anthropic.close();
    }
  });

  it("an image whose bytes are no JPEG, PNG, GIF or WebP (not an image, or empty) is named in text, whatever its label: the Messages API refuses it", async () => {
    const anthropic = await startFakeAnthropic();
    const broken: AgentTool = {
      ...screenshot,
      name: "broken",
      async execute() {
        return {
          ok: true,
          content: [
            { type: "text", text: "two shots" },
            { type: "image", data: PIXEL, mimeType: "image/png" },
            { type: "image", data: "", mimeType: "image/jpeg" },
            { type: "image", data: png(640, 480), mimeType: "image/png" },
          ],
        };
      },
    };
    try {
      anthropic.script(callTool("broken"), { text: "seen" });
      const { result } = await loop(5, [broken], undefined, "native", {
        provider: "anthropic",
        baseUrl: anthropic.baseUrl,
      });
      expect(result.text).toBe("seen");
      const sent = JSON.stringify(anthropic.requests[1]?.json.messages);
      expect([...sent.matchAll(/"media_type":"([^"]*)"/g)].map((m) => m[1])).toEqual(["image/png"]);
      expect(sent).toContain(
        "[image: image/png, 14 bytes — not shown: its bytes are no JPEG, PNG, GIF or WebP image, which the model cannot read]",
      );
      expect(sent).toContain(
        "[image: image/jpeg, 0 bytes — not shown: its bytes are no JPEG, PNG, GIF or WebP image, which the model cannot read]",
      );
    } finally {
      await anthropic.close();
    }
  });

  it("an image whose base64 is past 5 MB (4 MiB of PNG) is named in text: the Messages API measures the encoded image", async () => {
    const anthropic = await startFakeAnthropic();
    const data = Buffer.concat([pngHeader(1000, 1000), Buffer.alloc(4 * 1024 * 1024 - 33, 7)]).toString(
      "base64",
    );
    const photo: AgentTool = {
      ...screenshot,
      name: "photo",
      async execute() {
        return { ok: true, content: [{ type: "image", data, mimeType: "image/png" }] };
      },
    };
    try {
      anthropic.script(callTool("photo"), { text: "seen" });
      const { result } = await loop(5, [photo], undefined, "native", {
        provider: "anthropic",
        baseUrl: anthropic.baseUrl,
      });
      expect(result.text).toBe("seen");
      expect(JSON.stringify(anthropic.requests[1]?.json.messages)).toContain(
        `[image: image/png, ${4 * 1024 * 1024} bytes — not shown: the model takes JPEG, PNG, GIF and WebP images of at most 5 MB`,
      );
    } finally {
      await anthropic.close();
    }
  });

  it("an image with a side past 8000 pixels (a full-page screenshot) is named in text with its size: the Messages API refuses it", async () => {
    const anthropic = await startFakeAnthropic();
    // A PNG 1280 wide and 9000 tall; then one the API takes (1280 × 8000).
    const page: AgentTool = {
      ...screenshot,
      name: "page",
      async execute() {
        return {
          ok: true,
          content: [
            { type: "image", data: png(1280, 9000), mimeType: "image/png" },
            { type: "image", data: png(1280, 8000), mimeType: "image/png" },
          ],
        };
      },
    };
    try {
      anthropic.script(callTool("page"), { text: "seen" });
      const { result } = await loop(5, [page], undefined, "native", {
        provider: "anthropic",
        baseUrl: anthropic.baseUrl,
      });
      expect(result.text).toBe("seen");
      const sent = JSON.stringify(anthropic.requests[1]?.json.messages);
      expect(sent).toContain(
        "[image: image/png, 33 bytes, 1280×9000 pixels — not shown: the model takes JPEG, PNG, GIF and WebP images of at most 5 MB and 8000 pixels a side]",
      );
      expect(sent).toContain(`"data":"${png(1280, 8000)}"`);
    } finally {
      await anthropic.close();
    }
  });

  it("in a request of more than 20 images, one with a side past 2000 pixels is named in text: the Messages API refuses it there", async () => {
    const anthropic = await startFakeAnthropic();
    // A screenshot per turn: the first, on a HiDPI display, is 2560 wide; ten small ones a turn after it.
    const shots = [png(2560, 1440), ...Array.from({ length: 10 }, () => png(800, 600))];
    let turn = 0;
    const shoot: AgentTool = {
      ...screenshot,
      name: "shoot",
      async execute() {
        const taken = turn === 0 ? shots.slice(0, 1) : shots.slice(1);
        turn += 1;
        return {
          ok: true,
          content: taken.map((data) => ({ type: "image" as const, data, mimeType: "image/png" })),
        };
      },
    };
    try {
      anthropic.script(callTool("shoot"), callTool("shoot"), callTool("shoot"), { text: "seen" });
      const { result } = await loop(5, [shoot], undefined, "native", {
        provider: "anthropic",
        baseUrl: anthropic.baseUrl,
      });
      expect(result.text).toBe("seen");
      // 11 images: the wide one is sent; 21: it is named.
      expect(JSON.stringify(anthropic.requests[2]?.json.messages)).toContain(`"data":"${shots[0]}"`);
      const last = JSON.stringify(anthropic.requests[3]?.json.messages);
      expect(last).toContain(
        "[image: image/png, 33 bytes, 2560×1440 pixels — not shown: a request with more than 20 images takes images of at most 2000 pixels a side]",
      );
      expect(last.split(`"data":"${shots[1]}"`).length - 1).toBe(20);
    } finally {
      await anthropic.close();
    }
  });

  it("past 100 images in a request (the most the Messages API takes), the earliest are named in text", async () => {
    const anthropic = await startFakeAnthropic();
    // 60 distinct small images a turn, two turns: the second turn's request holds 120.
    const shot = (n: number) =>
      Buffer.concat([pngHeader(10, 10), Buffer.from(`shot number ${n} of the run`)]).toString("base64");
    let turn = 0;
    const shoot: AgentTool = {
      ...screenshot,
      name: "shoot",
      async execute() {
        const first = turn * 60;
        turn += 1;
        return {
          ok: true,
          content: Array.from({ length: 60 }, (_, i) => ({
            type: "image" as const,
            data: shot(first + i),
            mimeType: "image/png",
          })),
        };
      },
    };
    try {
      anthropic.script(callTool("shoot"), callTool("shoot"), { text: "seen" });
      const { result } = await loop(5, [shoot], undefined, "native", {
        provider: "anthropic",
        baseUrl: anthropic.baseUrl,
      });
      expect(result.text).toBe("seen");
      const last = JSON.stringify(anthropic.requests[2]?.json.messages);
      expect(last).not.toContain(`"data":"${shot(19)}"`);
      expect(last).toContain(`"data":"${shot(20)}"`);
      expect(last).toContain(`"data":"${shot(119)}"`);
      expect(last).toContain(
        `[image: image/png, ${Buffer.from(shot(0), "base64").length} bytes — not shown: a request takes at most 100 images; the run's latest 100 are shown]`,
      );
    } finally {
      await anthropic.close();
    }
  });

  it("a tool that answers no text (no content, a blank line) or fails with a blank error gives the model a line saying so, never an empty result", async () => {
    // The three calls of a turn run at once: each takes the next answer.
    const answers: Array<Awaited<ReturnType<AgentTool["execute"]>>> = [];
    const quiet: AgentTool = {
      ...upper,
      name: "quiet",
      execute: async () => answers.shift() ?? { ok: true, content: [] },
    };
    for (const provider of ["anthropic", "openai"] as const) {
      answers.push(
        { ok: true, content: [] },
        { ok: true, content: [{ type: "text", text: " \r\n" }] },
        { ok: false, error: "" },
      );
      const server = provider === "openai" ? model : await startFakeAnthropic();
      try {
        server.requests.length = 0;
        server.script(
          {
            toolCalls: [
              { name: "quiet", args: {} },
              { name: "quiet", args: {} },
              { name: "quiet", args: {} },
            ],
          },
          { text: "ok" },
        );
        await loop(5, [quiet], undefined, "native", { provider, baseUrl: server.baseUrl });
        const sent = JSON.stringify(server.requests[1]?.json.messages);
        expect(sent.match(/\(the tool returned no output\)/g)).toHaveLength(2);
        expect(sent).toContain("the tool failed without saying why");
        expect(sent).not.toMatch(/"content":"(\s|\\r|\\n)*"/);
      } finally {
        if (server !== model) await server.close();
      }
    }
  });

  it("an image a tool returns is named in text for a Chat Completions model, not inlined as base64", async () => {
    model.script(callTool("screenshot"), { text: "ok" });
    await loop(5, [screenshot]);
    const second = model.requests[1]?.json.messages as Array<{ role: string; content: unknown }>;
    const tool = String(second.find((m) => m.role === "tool")?.content);
    expect(tool).toBe(
      "here it is\n[image: image/png, 14 bytes — not shown: this model endpoint takes text-only tool results]",
    );
    expect(tool).not.toContain(PIXEL);
  });

  it("a tool's failure goes back to the model as its result and the loop goes on", async () => {
    model.script(callTool("upper", { text: 3 }), { text: "sorry" });
    const { result, log } = await loop(5);
    expect(result.text).toBe("sorry");
    expect(log.calls).toEqual([{ name: "upper", ms: 5, ok: false, error: "text must be a string" }]);
    const second = model.requests[1]?.json.messages as Array<{ role: string; content: unknown }>;
    expect(String(second.find((m) => m.role === "tool")?.content)).toContain("text must be a string");
  });

  it("a call to a tool offered under a shortened name that never ran (arguments not JSON, a turn cut at max_tokens) is recorded under its registered name", async () => {
    const registered = `mcp__enterprise_github__${"list_repository_collaborators_".repeat(2)}x`;
    const long: AgentTool = { ...upper, name: registered };
    const offered = modelToolName(registered);
    expect(offered).not.toBe(registered);
    model.script({ toolCalls: [{ name: offered, args: "{not json" }] }, { text: "done" });
    const bad = await loop(5, [long]);
    expect(bad.log.calls).toEqual([
      { name: registered, ms: 0, ok: false, error: expect.stringContaining("JSON parsing failed") },
    ]);
    model.script({ toolCalls: [{ name: offered, args: { text: "hal" } }], finishReason: "length" });
    const cut = await loop(5, [long]);
    expect(cut.log.calls).toEqual([{ name: registered, ms: 0, ok: false, error: NOT_RUN_CUT }]);
  });

  it("a tool named as another's shortened name takes neither its place nor its calls, listed before or after it", async () => {
    const registered = `mcp__enterprise_github__${"list_repository_collaborators_".repeat(2)}x`;
    const long: AgentTool = { ...upper, name: registered };
    // Another server's tool, named as the long one is shortened (64 characters: offered as it is).
    const crafted: AgentTool = { ...echo, name: modelToolName(registered) };
    for (const tools of [
      [crafted, long],
      [long, crafted],
    ]) {
      const offered = Object.keys(sdkTools(tools, context, new ToolCallLog()));
      expect(offered).toHaveLength(2);
      expect(offered).toContain(crafted.name);
      const other = offered.find((name) => name !== crafted.name) as string;
      expect(other).toHaveLength(64);
      expect(other).toBe(modelToolName(registered, 1));
      model.script({ toolCalls: [{ name: other, args: { text: "hal" } }] }, { text: "done" });
      const { log } = await loop(5, tools);
      expect(log.calls).toEqual([{ name: registered, ms: 5, ok: true }]);
      model.script({ toolCalls: [{ name: crafted.name, args: { text: "hal" } }] }, { text: "done" });
      const second = await loop(5, tools);
      expect(second.log.calls).toEqual([{ name: crafted.name, ms: 5, ok: true }]);
    }
  });

  it("stops at maxSteps when the model keeps asking for tools", async () => {
    model.script(callTool("upper", { text: "a" }), callTool("upper", { text: "b" }), { text: "unused" });
    const { result, progress } = await loop(2);
    expect(result.stoppedAtMaxSteps).toBe(true);
    expect(progress.steps).toBe(2);
    expect(model.requests).toHaveLength(2);
    // The unused turn is taken here, not by the next test.
    await loop(1);
  });
});

describe("pieces", () => {
  it("outcomeOf: an MCP isError result is a tool error with the server's text", () => {
    expect(outcomeOf({ content: [{ type: "text", text: "it broke" }], isError: true })).toEqual({
      ok: false,
      error: "it broke",
    });
    // A failure without a message (no content, a blank text) says so, to a model and a command agent alike.
    for (const content of [[], [{ type: "text" as const, text: " \n" }]])
      expect(outcomeOf({ content, isError: true })).toEqual({
        ok: false,
        error: "the tool failed without saying why",
      });
    expect(outcomeOf({ content: [], structuredContent: { n: 1 } })).toEqual({
      ok: true,
      content: [{ type: "text", text: '{"n":1}' }],
    }); // Only blank text beside it (an empty text block a server adds for older clients): the data, not "(no output)".
    expect(outcomeOf({ content: [{ type: "text", text: " " }], structuredContent: { n: 1 } })).toEqual({
      ok: true,
      content: [{ type: "text", text: '{"n":1}' }],
    });
    expect(
      outcomeOf({ content: [{ type: "text", text: "" }], structuredContent: { n: 1 }, isError: true }),
    ).toEqual({
      ok: false,
      error: '{"n":1}',
    });
    // A failure with a screenshot (a browser server's failed step): the image is named as everywhere else.
    expect(
      outcomeOf({
        content: [
          { type: "text", text: "click failed" },
          { type: "image", data: PIXEL, mimeType: "image/png" },
        ],
        isError: true,
      }),
    ).toEqual({
      ok: false,
      error:
        "click failed\n[image: image/png, 14 bytes — not shown: a failed call's result reaches the model as text]",
    });
  });

  it("outcomeOf: audio and binary resources are named in a line, not passed on as base64 text", () => {
    const data = Buffer.alloc(3000).toString("base64");
    expect(
      outcomeOf({
        content: [
          { type: "audio", data, mimeType: "audio/wav" },
          { type: "resource", resource: { uri: "file:///a.bin", mimeType: "application/zip", blob: data } },
          { type: "resource", resource: { uri: "file:///a.txt", text: "hello" } },
        ],
      }),
    ).toEqual({
      ok: true,
      content: [
        {
          type: "text",
          text: "[audio: audio/wav, 3000 bytes — not shown: tool results reach the model as text and images only]",
        },
        {
          type: "text",
          text: "[resource file:///a.bin: application/zip, 3000 bytes — not shown: tool results reach the model as text and images only]",
        },
        { type: "text", text: '{"type":"resource","resource":{"uri":"file:///a.txt","text":"hello"}}' },
      ],
    });
  });

  it("systemText: system_prompt first, then the skill under a header", () => {
    expect(systemText(" Be brief. ", { name: "review", text: "Look closely.\n" })).toBe(
      "Be brief.\n\n# Skill: review\n\nLook closely.",
    );
    expect(systemText(undefined, undefined)).toBeUndefined();
  });
});
