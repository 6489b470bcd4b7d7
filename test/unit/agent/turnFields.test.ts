import { afterEach, describe, expect, it } from "vitest";
import { REASONING_ONLY_FAILURE } from "../../../src/agent/thinkText.js";
import type { AgentTool } from "../../../src/agent/tools/tool.js";
import { type FakeApi, type FakeReply, startFakeApi } from "../../fakes/httpFake.js";
import { testModelRunner } from "../../helpers/testModelRunner.js";

/**
 * OpenRouter gives a reasoning model's turn its `reasoning_details` (Gemini 3's thought signatures, an
 * OpenAI model's encrypted reasoning, Claude's signed thinking) and, for Gemini models, refuses a request
 * whose earlier tool-calling turn comes back without them: every run that called a tool failed on its
 * second turn. They go back with their turn, as written; so do LiteLLM's `thinking_blocks` (Claude's).
 */

const DETAILS = [
  { type: "reasoning.text", text: "Look the city up.", format: "google-gemini-v1", index: 0 },
  {
    type: "reasoning.encrypted",
    data: "CiQBjz1rX8sig==",
    id: "tool_weather_0",
    format: "google-gemini-v1",
    index: 1,
  },
];

/** OpenRouter's answer for a Gemini model whose earlier tool call came back without its reasoning details. */
const REFUSAL: FakeReply = {
  status: 400,
  json: {
    error: {
      message: "Provider returned error",
      code: 400,
      metadata: {
        raw: "Gemini models require OpenRouter reasoning details to be preserved in each request. Upstream error: Function call is missing a thought_signature in functionCall parts.",
        provider_name: "Google AI Studio",
      },
    },
  },
};

const calls: unknown[] = [];
const weather: AgentTool = {
  name: "weather",
  description: "Weather of a city",
  inputSchema: { type: "object", properties: { city: { type: "string" } } },
  async execute(args) {
    calls.push(args);
    return { ok: true, content: [{ type: "text", text: "21°C" }] };
  },
};

const completion = (message: Record<string, unknown>, finish: string): FakeReply => ({
  json: {
    id: "gen-1",
    object: "chat.completion",
    model: "google/gemini-3-pro-preview",
    choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: finish }],
    usage: { prompt_tokens: 10, completion_tokens: 5 },
  },
});

const toolTurn = completion(
  {
    content: "",
    reasoning: "Look the city up.",
    reasoning_details: DETAILS,
    tool_calls: [
      {
        id: "tool_weather_0",
        type: "function",
        function: { name: "weather", arguments: '{"city":"Zürich"}' },
      },
    ],
  },
  "tool_calls",
);

type Message = Record<string, unknown>;
const assistantTurns = (json: unknown): Message[] =>
  ((json as { messages?: Message[] }).messages ?? []).filter((m) => m.role === "assistant");

/** A Chat Completions server that, as OpenRouter does for Gemini, refuses a tool-calling turn sent back without its reasoning details. */
async function openRouterLike(first: FakeReply): Promise<FakeApi> {
  let turn = 0;
  return startFakeApi((request) => {
    const lacking = assistantTurns(request.json).some(
      (m) => Array.isArray(m.tool_calls) && m.reasoning_details === undefined,
    );
    if (lacking) return REFUSAL;
    return turn++ === 0 ? first : completion({ content: "It is 21°C in Zürich." }, "stop");
  });
}

/** One Chat Completions chunk as an event of a stream. */
const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "gen-1", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

/** Claude's signed thinking, as LiteLLM gives it beside a turn's text (`thinking_blocks`). */
const BLOCKS = [{ type: "thinking", thinking: "Look the city up.", signature: "EqoBCkgIARABGAIiQL2U" }];

/**
 * A Chat Completions server that, as Claude through LiteLLM does with thinking on, answers `first` and then
 * refuses a tool-calling turn sent back without its thinking blocks.
 */
async function liteLlmLike(first: FakeReply): Promise<FakeApi> {
  return startFakeApi((request) => {
    const [earlier] = assistantTurns(request.json);
    if (earlier === undefined) return first;
    // As Anthropic answers through LiteLLM when the thinking blocks are missing.
    if (earlier.thinking_blocks === undefined)
      return {
        status: 400,
        json: {
          error: {
            message:
              "litellm.BadRequestError: AnthropicException - messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`.",
            code: "400",
          },
        },
      };
    return completion({ content: "21°C." }, "stop");
  });
}

const runWith = (baseUrl: string) =>
  testModelRunner(
    { provider: "openai", model: "google/gemini-3-pro-preview", base_url: `${baseUrl}/api/v1` },
    [weather],
  ).run(
    {
      route: "r",
      event: "e",
      deliveryId: "d",
      prompt: "Weather in Zürich?",
      toolsets: [],
      profile: undefined,
    },
    new AbortController().signal,
  );

let server: FakeApi | undefined;
afterEach(async () => {
  calls.length = 0;
  await server?.close();
});

describe("a turn's signed reasoning from a Chat Completions router", () => {
  it("OpenRouter's reasoning_details go back with the tool-calling turn they came with, as written: the run finishes and its reply is delivered", async () => {
    server = await openRouterLike(toolTurn);
    const reply = await runWith(server.url);
    expect(reply.text).toBe("It is 21°C in Zürich.");
    expect(calls).toEqual([{ city: "Zürich" }]);
    expect(server.requests).toHaveLength(2);
    const [sent] = assistantTurns(server.requests[1]?.json);
    expect(sent?.reasoning_details).toEqual(DETAILS);
    expect(sent?.tool_calls).toEqual([
      {
        id: "tool_weather_0",
        type: "function",
        function: { name: "weather", arguments: '{"city":"Zürich"}' },
      },
    ]);
  });

  it("OpenRouter's reasoning_details streamed in pieces to a request that asked for no stream (a proxy set to always stream), they go back joined", async () => {
    const [text, encrypted] = DETAILS;
    const streamed: FakeReply = {
      headers: { "content-type": "text/event-stream" },
      text: [
        chunk({
          role: "assistant",
          reasoning: "Look the city ",
          reasoning_details: [{ ...text, text: "Look the city " }],
        }),
        chunk({ reasoning: "up.", reasoning_details: [{ type: "reasoning.text", text: "up.", index: 0 }] }),
        chunk({
          reasoning_details: [encrypted],
          tool_calls: [
            {
              index: 0,
              id: "tool_weather_0",
              type: "function",
              function: { name: "weather", arguments: "" },
            },
          ],
        }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":"Zürich"}' } }] }),
        chunk({}, "tool_calls"),
        "data: [DONE]\n\n",
      ].join(""),
    };
    server = await openRouterLike(streamed);
    expect((await runWith(server.url)).text).toBe("It is 21°C in Zürich.");
    expect(assistantTurns(server.requests[1]?.json)[0]?.reasoning_details).toEqual(DETAILS);
  });

  it("LiteLLM's thinking_blocks (Claude with thinking on) go back with their tool-calling turn, as written", async () => {
    server = await liteLlmLike(
      completion(
        {
          content: null,
          reasoning_content: "Look the city up.",
          thinking_blocks: BLOCKS,
          tool_calls: [{ id: "toolu_1", type: "function", function: { name: "weather", arguments: "{}" } }],
        },
        "tool_calls",
      ),
    );
    expect((await runWith(server.url)).text).toBe("21°C.");
    expect(assistantTurns(server.requests[1]?.json)[0]?.thinking_blocks).toEqual(BLOCKS);
  });

  it("LiteLLM's thinking_blocks streamed in pieces to a request that asked for no stream (a proxy set to always stream), they go back joined: the thinking, then the signature", async () => {
    // As LiteLLM streams Claude's thinking: each delta's block holds a piece of it, the signature comes last.
    const streamed: FakeReply = {
      headers: { "content-type": "text/event-stream" },
      text: [
        chunk({
          role: "assistant",
          reasoning_content: "Look the city ",
          thinking_blocks: [{ type: "thinking", thinking: "Look the city ", signature: "" }],
        }),
        chunk({ reasoning_content: "up.", thinking_blocks: [{ type: "thinking", thinking: "up." }] }),
        chunk({ thinking_blocks: [{ type: "thinking", thinking: "", signature: "EqoBCkgIARABGAIiQL2U" }] }),
        chunk({
          tool_calls: [
            { index: 0, id: "toolu_1", type: "function", function: { name: "weather", arguments: "{}" } },
          ],
        }),
        chunk({}, "tool_calls"),
        "data: [DONE]\n\n",
      ].join(""),
    };
    server = await liteLlmLike(streamed);
    expect((await runWith(server.url)).text).toBe("21°C.");
    expect(assistantTurns(server.requests[1]?.json)[0]?.thinking_blocks).toEqual(BLOCKS);
  });

  it("a turn without them goes back without them (other servers are sent no field they did not write)", async () => {
    server = await startFakeApi();
    server.enqueue(
      completion(
        {
          content: null,
          tool_calls: [{ id: "c1", type: "function", function: { name: "weather", arguments: "{}" } }],
        },
        "tool_calls",
      ),
      completion({ content: "done" }, "stop"),
    );
    expect((await runWith(server.url)).text).toBe("done");
    expect(assistantTurns(server.requests[1]?.json)[0]).not.toHaveProperty("reasoning_details");
  });
});

// Seen: an OpenAI model's answer through OpenRouter holding only its encrypted reasoning_details, content "" and
// finish_reason stop, delivered as an empty reply with outcome ok (the AI SDK gives no reasoning part for it).
describe("OpenRouter's reasoning_details alone in a finished answer", () => {
  const encrypted = {
    type: "reasoning.encrypted",
    data: "gAAAAABo1x2",
    id: "rs_1",
    format: "openai-responses-v1",
    index: 0,
  };
  it("JSON: fails the run, saying it held only its reasoning", async () => {
    server = await startFakeApi(() => completion({ content: "", reasoning_details: [encrypted] }, "stop"));
    await expect(runWith(server.url)).rejects.toMatchObject({
      message: REASONING_ONLY_FAILURE,
      record: { outcome: "error", error: REASONING_ONLY_FAILURE },
    });
  });

  it("streamed: fails the run alike", async () => {
    server = await startFakeApi(() => ({
      headers: { "content-type": "text/event-stream" },
      text: [
        chunk({ role: "assistant", content: "", reasoning_details: [encrypted] }),
        chunk({}, "stop"),
        "data: [DONE]\n\n",
      ].join(""),
    }));
    await expect(runWith(server.url)).rejects.toMatchObject({ message: REASONING_ONLY_FAILURE });
  });

  it("with the reply text: the text is the reply", async () => {
    server = await startFakeApi(() => completion({ content: "Hi!", reasoning_details: [encrypted] }, "stop"));
    expect(await runWith(server.url)).toMatchObject({ text: "Hi!", record: { outcome: "ok" } });
  });

  // Seen: Claude's signed thinking with an empty text through OpenRouter (content "") delivered as an empty reply
  // with outcome ok: its entry's text is blank, its thinking held in the signature.
  const signed = {
    type: "reasoning.text",
    text: "",
    signature: "EqQBCkgIARABGAIiQL2xZ0",
    format: "anthropic-claude-v1",
    index: 0,
  };
  it("JSON: a signed entry with an empty text alone fails the run, saying it held only its reasoning", async () => {
    server = await startFakeApi(() => completion({ content: "", reasoning_details: [signed] }, "stop"));
    await expect(runWith(server.url)).rejects.toMatchObject({
      message: REASONING_ONLY_FAILURE,
      record: { outcome: "error", error: REASONING_ONLY_FAILURE },
    });
  });

  it("streamed: a signed entry with an empty text alone fails the run alike", async () => {
    server = await startFakeApi(() => ({
      headers: { "content-type": "text/event-stream" },
      text: [
        chunk({ role: "assistant", content: "", reasoning_details: [signed] }),
        chunk({}, "stop"),
        "data: [DONE]\n\n",
      ].join(""),
    }));
    await expect(runWith(server.url)).rejects.toMatchObject({ message: REASONING_ONLY_FAILURE });
  });

  it("an unsigned entry with an empty text is no reasoning: an empty reply", async () => {
    const { signature: _unsigned, ...blank } = signed;
    server = await startFakeApi(() => completion({ content: "", reasoning_details: [blank] }, "stop"));
    expect(await runWith(server.url)).toMatchObject({ text: "", record: { outcome: "ok" } });
  });
});
