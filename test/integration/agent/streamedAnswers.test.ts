import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startFakeAnthropic } from "../../fakes/anthropicServer.js";
import type { FakeApi } from "../../fakes/httpFake.js";
import { callTool, startFakeOpenAI } from "../../fakes/openaiServer.js";
import { startFakeTelegram } from "../../fakes/telegram.js";
import { type RecordingMcp, startRecordingMcp } from "../../fixtures/mcp/recordingServer.js";
import { gatewayPerTest, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { journalLines } from "../../helpers/runJournal.js";
import { telegramMessages } from "../../helpers/telegramMessages.js";

/**
 * A model endpoint that answers a request asking for no stream with a stream of events, as proxies and
 * gateways set to always stream do (docs/agent.md): the run goes on as if it had answered JSON.
 */

const OPEN = "INSECURE_NO_AUTH";
const perTest = gatewayPerTest();
let telegram: FakeApi;
let notes: RecordingMcp;

beforeAll(async () => {
  [telegram, notes] = await Promise.all([startFakeTelegram(), startRecordingMcp("notes: ")]);
});
afterAll(async () => {
  await Promise.all([telegram?.close(), notes?.close()]);
});

const chatTarget = { deliver: "telegram", deliver_extra: { chat_id: "-5" } };

function gatewayFor(provider: "openai" | "anthropic", baseUrl: string, retries = 0) {
  telegram.requests.length = 0;
  notes.calls.length = 0;
  return perTest.start({
    config: webhookConfig(
      { look: { secret: OPEN, prompt: "look up k1", toolsets: ["notes"], ...chatTarget } },
      {},
      {
        agent: { provider, model: "streamer", base_url: baseUrl, retries },
        mcp_servers: { notes: { url: notes.url } },
        platforms: { telegram: { enabled: true, token: "1:tg", base_url: telegram.url } },
      },
    ),
  });
}

async function journalled(home: string): Promise<Record<string, unknown> | undefined> {
  return vi.waitFor(
    () => {
      const line = journalLines<{ run?: Record<string, unknown> }>(home)[0];
      if (line === undefined) throw new Error("not journalled yet");
      return line.run;
    },
    { timeout: 5000, interval: 20 },
  );
}

/** A 200 answer of `body` as an event stream, written as it is (the fake's own streams are well formed). */
const eventStream = (body: string) => ({
  status: 200,
  headers: { "content-type": "text/event-stream" },
  body,
});
/** Anthropic's error event for an overloaded API. */
const OVERLOADED = { type: "error", error: { type: "overloaded_error", message: "Overloaded" } };

/** The run journal's record of a run that called the tool and then answered: two model turns, their usage. */
async function expectToolRunJournalled(home: string): Promise<void> {
  expect(await journalled(home)).toMatchObject({ outcome: "ok", steps: 2, usage: { input: 20, output: 10 } });
}

/** A Chat Completions stream's first chunk, with no finish reason: what a stream cut off after it ends on. */
const FIRST_CHUNK = {
  id: "c1",
  object: "chat.completion.chunk",
  choices: [{ index: 0, delta: { content: "The build" }, finish_reason: null }],
};
describe("a model endpoint that streams its answers to requests that ask for no stream", () => {
  it("provider openai: the streamed tool call runs the MCP tool, its result goes back, and the streamed text is delivered without its thinking", async () => {
    const model = await startFakeOpenAI({ streamAlways: true });
    try {
      // The thinking at the start of the text is taken apart, as in an answer written as JSON.
      model.script(callTool("mcp__notes__lookup", { key: "k1" }), {
        text: "<think>The notes have it.</think>Found it — Zürich ✓.",
      });
      const gw = await gatewayFor("openai", model.baseUrl);
      expect((await postJson(gw.url("/webhooks/look"), {})).status).toBe(202);
      expect(await telegramMessages(telegram, 1)).toEqual(["Found it — Zürich ✓."]);
      expect(model.requests.map((r) => r.json.stream)).toEqual([undefined, undefined]);
      expect(notes.calls).toEqual([{ tool: "lookup", args: { key: "k1" } }]);
      const messages = (model.requests[1]?.json.messages ?? []) as Array<Record<string, unknown>>;
      expect(messages.slice(-2)).toEqual([
        {
          role: "assistant",
          content: null,
          tool_calls: [
            {
              id: "call_0_0",
              type: "function",
              function: { name: "mcp__notes__lookup", arguments: '{"key":"k1"}' },
            },
          ],
        },
        { role: "tool", tool_call_id: "call_0_0", content: "notes: value of k1" },
      ]);
      await expectToolRunJournalled(gw.home.dir);
    } finally {
      await model.close();
    }
  });

  it("provider anthropic: the streamed tool_use runs the MCP tool, its result goes back, and the streamed text is delivered", async () => {
    const model = await startFakeAnthropic({ streamAlways: true });
    try {
      model.script(
        { text: "Let me look.", toolCalls: [{ name: "mcp__notes__lookup", args: { key: "k1" } }] },
        { text: "Found it — Zürich ✓." },
      );
      const gw = await gatewayFor("anthropic", model.baseUrl);
      expect((await postJson(gw.url("/webhooks/look"), {})).status).toBe(202);
      expect(await telegramMessages(telegram, 1)).toEqual(["Found it — Zürich ✓."]);
      expect(model.requests.map((r) => r.json.stream)).toEqual([undefined, undefined]);
      expect(notes.calls).toEqual([{ tool: "lookup", args: { key: "k1" } }]);
      const messages = (model.requests[1]?.json.messages ?? []) as Array<Record<string, unknown>>;
      expect(messages.slice(-2)).toEqual([
        {
          role: "assistant",
          content: [
            { type: "text", text: "Let me look." },
            { type: "tool_use", id: "toolu_0_0", name: "mcp__notes__lookup", input: { key: "k1" } },
          ],
        },
        {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: "toolu_0_0", content: "notes: value of k1" }],
        },
      ]);
      await expectToolRunJournalled(gw.home.dir);
    } finally {
      await model.close();
    }
  });

  it("provider openai: parallel calls streamed all at index 0, each with its own id (Ollama), each run once with its own arguments", async () => {
    const model = await startFakeOpenAI();
    try {
      // Ollama's shape: each call whole in one chunk, every one at index 0; the finish reason is stop.
      const chunk = (delta: unknown, finish: string | null = null) => ({
        id: "chatcmpl-1",
        object: "chat.completion.chunk",
        created: 1_700_000_000,
        model: "qwen3",
        system_fingerprint: "fp_ollama",
        choices: [
          {
            index: 0,
            delta: { role: "assistant", content: "", ...(delta as object) },
            finish_reason: finish,
          },
        ],
      });
      const call = (id: string, key: string) => ({
        tool_calls: [
          {
            id,
            index: 0,
            type: "function",
            function: { name: "mcp__notes__lookup", arguments: `{"key":"${key}"}` },
          },
        ],
      });
      const events = [chunk(call("call_a", "k1")), chunk(call("call_b", "k2")), chunk({}, "stop"), "[DONE]"];
      model.script(
        eventStream(events.map((e) => `data: ${typeof e === "string" ? e : JSON.stringify(e)}\n\n`).join("")),
        { text: "Both found." },
      );
      const gw = await gatewayFor("openai", model.baseUrl);
      expect((await postJson(gw.url("/webhooks/look"), {})).status).toBe(202);
      expect(await telegramMessages(telegram, 1)).toEqual(["Both found."]);
      expect(notes.calls).toEqual([
        { tool: "lookup", args: { key: "k1" } },
        { tool: "lookup", args: { key: "k2" } },
      ]);
      const messages = (model.requests[1]?.json.messages ?? []) as Array<Record<string, unknown>>;
      expect(messages.slice(-3)).toEqual([
        {
          role: "assistant",
          content: null,
          tool_calls: [
            {
              id: "call_a",
              type: "function",
              function: { name: "mcp__notes__lookup", arguments: '{"key":"k1"}' },
            },
            {
              id: "call_b",
              type: "function",
              function: { name: "mcp__notes__lookup", arguments: '{"key":"k2"}' },
            },
          ],
        },
        { role: "tool", tool_call_id: "call_a", content: "notes: value of k1" },
        { role: "tool", tool_call_id: "call_b", content: "notes: value of k2" },
      ]);
    } finally {
      await model.close();
    }
  });

  it("provider openai: an error OpenRouter sends in the stream after some text is retried, and the next tries' call runs once", async () => {
    const model = await startFakeOpenAI({ streamAlways: true });
    try {
      const failed = {
        id: "gen-1",
        object: "chat.completion.chunk",
        created: 1_700_000_000,
        model: "openai/gpt-4o",
        provider: "OpenAI",
        error: { code: "server_error", message: "Provider disconnected unexpectedly" },
        choices: [{ index: 0, delta: { content: "" }, finish_reason: "error" }],
      };
      model.script(
        eventStream(
          `: OPENROUTER PROCESSING\n\ndata: ${JSON.stringify(FIRST_CHUNK)}\n\ndata: ${JSON.stringify(failed)}\n\n`,
        ),
        callTool("mcp__notes__lookup", { key: "k1" }),
        { text: "Found it." },
      );
      // The run's first retry waits its backoff (a second): no assertion on time.
      const gw = await gatewayFor("openai", model.baseUrl, 1);
      expect((await postJson(gw.url("/webhooks/look"), {})).status).toBe(202);
      expect(await telegramMessages(telegram, 1)).toEqual(["Found it."]);
      expect(model.requests).toHaveLength(3);
      expect(notes.calls).toEqual([{ tool: "lookup", args: { key: "k1" } }]);
    } finally {
      await model.close();
    }
  });

  it("provider openai: a whole answer sent as one event, or as JSON followed by data: [DONE], is read as that answer: its call runs once, its text is delivered", async () => {
    const model = await startFakeOpenAI();
    try {
      const completion = (message: Record<string, unknown>, finish: string) =>
        JSON.stringify({
          id: "c1",
          object: "chat.completion",
          created: 1_700_000_000,
          model: "streamer",
          choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: finish }],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        });
      const call = {
        content: null,
        tool_calls: [
          {
            id: "call_1",
            type: "function",
            function: { name: "mcp__notes__lookup", arguments: '{"key":"k1"}' },
          },
        ],
      };
      model.script(
        // A gateway that streams a whole answer in one event.
        eventStream(`data: ${completion(call, "tool_calls")}\n\ndata: [DONE]\n\n`),
        // A router that answers JSON labelled as a stream, with the stream's end marker after it.
        eventStream(`${completion({ content: "Found it." }, "stop")}\n\ndata: [DONE]\n\n`),
      );
      const gw = await gatewayFor("openai", model.baseUrl);
      expect((await postJson(gw.url("/webhooks/look"), {})).status).toBe(202);
      expect(await telegramMessages(telegram, 1)).toEqual(["Found it."]);
      expect(notes.calls).toEqual([{ tool: "lookup", args: { key: "k1" } }]);
      await expectToolRunJournalled(gw.home.dir);
    } finally {
      await model.close();
    }
  });

  it("provider openai: Groq's streamed usage, sent in x_groq.usage of the last chunk (no usage of its own), counts in the run's usage", async () => {
    const model = await startFakeOpenAI();
    try {
      const groqUsage = {
        queue_time: 0.01,
        prompt_tokens: 10,
        prompt_time: 0.002,
        completion_tokens: 5,
        completion_time: 0.004,
        total_tokens: 15,
        total_time: 0.006,
      };
      const chunk = (delta: Record<string, unknown>, finish: string | null, xGroq: Record<string, unknown>) =>
        `data: ${JSON.stringify({
          id: "chatcmpl-g1",
          object: "chat.completion.chunk",
          created: 1_700_000_000,
          model: "llama-3.3-70b-versatile",
          system_fingerprint: "fp_1",
          choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
          x_groq: xGroq,
        })}\n\n`;
      const call = {
        tool_calls: [
          {
            index: 0,
            id: "call_g1",
            type: "function",
            function: { name: "mcp__notes__lookup", arguments: '{"key":"k1"}' },
          },
        ],
      };
      model.script(
        eventStream(
          `${chunk({ role: "assistant", content: null }, null, { id: "req_1" })}${chunk(call, null, { id: "req_1" })}${chunk({}, "tool_calls", { id: "req_1", usage: groqUsage })}data: [DONE]\n\n`,
        ),
        eventStream(
          `${chunk({ role: "assistant", content: "Found it." }, null, { id: "req_2" })}${chunk({}, "stop", { id: "req_2", usage: groqUsage })}data: [DONE]\n\n`,
        ),
      );
      const gw = await gatewayFor("openai", model.baseUrl);
      expect((await postJson(gw.url("/webhooks/look"), {})).status).toBe(202);
      expect(await telegramMessages(telegram, 1)).toEqual(["Found it."]);
      expect(notes.calls).toEqual([{ tool: "lookup", args: { key: "k1" } }]);
      await expectToolRunJournalled(gw.home.dir);
    } finally {
      await model.close();
    }
  });

  it("a stream cut off before its end, with no retry left (retries: 0), fails the run: the notice names the endpoint and what was wrong", async () => {
    const model = await startFakeOpenAI();
    try {
      model.script(eventStream(`data: ${JSON.stringify(FIRST_CHUNK)}\n\ndata: {"id":"c1","choi`));
      const gw = await gatewayFor("openai", model.baseUrl);
      expect((await postJson(gw.url("/webhooks/look"), {})).status).toBe(202);
      expect(await telegramMessages(telegram, 1)).toEqual([
        `⚠️ Agent run failed: model endpoint ${model.baseUrl}/chat/completions gave an answer svc cannot use (HTTP 200): an event stream (text/event-stream) cut off before its end (no data: [DONE] after 1 event) — the server, or a proxy in front of it, ended the answer early`,
      ]);
      expect(await journalled(gw.home.dir)).toMatchObject({ outcome: "error", steps: 0 });
    } finally {
      await model.close();
    }
  });

  it("a stream cut off before its end is retried, as an answer whose connection dropped mid-way is, and the next try's answer is delivered", async () => {
    const model = await startFakeOpenAI();
    try {
      // The proxy ends the body cleanly after one chunk: no finish reason, no data: [DONE].
      model.script(eventStream(`data: ${JSON.stringify(FIRST_CHUNK)}\n\n`), { text: "The build passed." });
      // The run's first retry waits its backoff (a second): no assertion on time.
      const gw = await gatewayFor("openai", model.baseUrl, 1);
      expect((await postJson(gw.url("/webhooks/look"), {})).status).toBe(202);
      expect(await telegramMessages(telegram, 1)).toEqual(["The build passed."]);
      expect(model.requests).toHaveLength(2);
      expect(await journalled(gw.home.dir)).toMatchObject({ outcome: "ok", steps: 1 });
    } finally {
      await model.close();
    }
  });

  it("provider anthropic: a stream cut off before its message_stop is retried, and the next try's answer is delivered", async () => {
    const model = await startFakeAnthropic();
    try {
      const start = {
        type: "message_start",
        message: { id: "m", type: "message", role: "assistant", content: [] },
      };
      const block = { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } };
      model.script(
        eventStream(
          `event: message_start\ndata: ${JSON.stringify(start)}\n\nevent: content_block_start\ndata: ${JSON.stringify(block)}\n\n`,
        ),
        { text: "Found it." },
      );
      const gw = await gatewayFor("anthropic", model.baseUrl, 1);
      expect((await postJson(gw.url("/webhooks/look"), {})).status).toBe(202);
      expect(await telegramMessages(telegram, 1)).toEqual(["Found it."]);
      expect(model.requests).toHaveLength(2);
    } finally {
      await model.close();
    }
  });

  it("provider anthropic: a streamed turn cut at max_tokens inside a tool_use's input fails the run as cut at agent.max_tokens, the call not run", async () => {
    const model = await startFakeAnthropic();
    try {
      const events = [
        {
          type: "message_start",
          message: { id: "m", type: "message", role: "assistant", content: [], usage: { input_tokens: 9 } },
        },
        {
          type: "content_block_start",
          index: 0,
          content_block: { type: "tool_use", id: "toolu_9", name: "mcp__notes__lookup", input: {} },
        },
        // The limit struck inside the arguments: their JSON is unfinished.
        {
          type: "content_block_delta",
          index: 0,
          delta: { type: "input_json_delta", partial_json: '{"key": "k' },
        },
        { type: "content_block_stop", index: 0 },
        { type: "message_delta", delta: { stop_reason: "max_tokens" }, usage: { output_tokens: 4 } },
        { type: "message_stop" },
      ];
      model.script(
        eventStream(events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join("")),
      );
      const gw = await gatewayFor("anthropic", model.baseUrl);
      expect((await postJson(gw.url("/webhooks/look"), {})).status).toBe(202);
      expect(await telegramMessages(telegram, 1)).toEqual([
        "⚠️ Agent run failed: the model's answer was cut at agent.max_tokens (4096 tokens) while it asked for a tool, which was not run — raise agent.max_tokens",
      ]);
      expect(model.requests).toHaveLength(1);
      expect(notes.calls).toEqual([]);
      expect(await journalled(gw.home.dir)).toMatchObject({
        outcome: "error",
        steps: 1,
        toolCalls: [
          {
            name: "mcp__notes__lookup",
            ok: false,
            error: expect.stringMatching(/^not run: the model's answer was cut at agent\.max_tokens/),
          },
        ],
      });
    } finally {
      await model.close();
    }
  });

  it("provider anthropic: an error event in the stream fails the run, quoting its type and message", async () => {
    const model = await startFakeAnthropic();
    try {
      const start = {
        type: "message_start",
        message: { id: "m", type: "message", role: "assistant", content: [] },
      };
      model.script(
        eventStream(
          `event: message_start\ndata: ${JSON.stringify(start)}\n\nevent: error\ndata: ${JSON.stringify(OVERLOADED)}\n\n`,
        ),
      );
      const gw = await gatewayFor("anthropic", model.baseUrl);
      expect((await postJson(gw.url("/webhooks/look"), {})).status).toBe(202);
      expect(await telegramMessages(telegram, 1)).toEqual([
        `⚠️ Agent run failed: model endpoint ${model.baseUrl}/messages gave an answer svc cannot use (HTTP 200): {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
      ]);
    } finally {
      await model.close();
    }
  });

  it("provider anthropic: a streamed overload is retried, as a 529 answer is, and the next try's answer is delivered", async () => {
    const model = await startFakeAnthropic();
    try {
      model.script(eventStream(`event: error\ndata: ${JSON.stringify(OVERLOADED)}\n\n`), {
        text: "Found it.",
      });
      // The run's first retry waits its backoff (a second): no assertion on time.
      const gw = await gatewayFor("anthropic", model.baseUrl, 1);
      expect((await postJson(gw.url("/webhooks/look"), {})).status).toBe(202);
      expect(await telegramMessages(telegram, 1)).toEqual(["Found it."]);
      expect(model.requests).toHaveLength(2);
    } finally {
      await model.close();
    }
  });
});
