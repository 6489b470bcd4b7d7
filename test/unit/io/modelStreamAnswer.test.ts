import { describe, expect, it } from "vitest";
import { streamedAnswer } from "../../../src/io/modelStreamAnswer.js";

/** An event stream as servers write it: each event's lines, then a blank line. */
const stream = (...events: ReadonlyArray<{ event?: string; data: unknown }>): string =>
  events
    .map(
      ({ event, data }) =>
        `${event === undefined ? "" : `event: ${event}\n`}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`,
    )
    .join("");

const head = { id: "chatcmpl-7", object: "chat.completion.chunk", created: 1_700_000_000, model: "gpt-x" };
const chunk = (delta: unknown, finish: string | null = null, index = 0) => ({
  data: { ...head, choices: [{ index, delta, finish_reason: finish }] },
});
const DONE = { data: "[DONE]" };
const usage = { prompt_tokens: 31, completion_tokens: 12, total_tokens: 43 };
/** The first choice's message of a Chat Completions stream assembled whole. */
const firstMessage = (text: string): unknown =>
  (streamedAnswer(text, "chat") as { answer: { choices: Array<{ message: unknown }> } }).answer.choices[0]
    ?.message;
/** An assistant message with no text and these calls, each `[id, name, arguments]`. */
const callsMessage = (...calls: Array<[string, string, string]>) => ({
  role: "assistant",
  content: null,
  tool_calls: calls.map(([id, name, args]) => ({
    id,
    type: "function",
    function: { name, arguments: args },
  })),
});
/** The chat.completion of one choice that answered `content` and stopped, with `usage`. */
const textCompletion = (content: string) => ({
  id: "chatcmpl-7",
  object: "chat.completion",
  created: 1_700_000_000,
  model: "gpt-x",
  choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
  usage,
});

describe("streamedAnswer: Chat Completions chunks assembled into the chat.completion a request without stream gets", () => {
  it("a text answer: the deltas' text joined, the finish reason, the usage of the last chunk", () => {
    const text = stream(
      chunk({ role: "assistant", content: "" }),
      chunk({ content: "The build " }),
      chunk({ content: "is green — ✓" }),
      chunk({}, "stop"),
      { data: { ...head, choices: [], usage } },
      DONE,
    );
    expect(streamedAnswer(text, "chat")).toEqual({ answer: textCompletion("The build is green — ✓") });
  });

  it("several tool calls interleaved by index, their arguments split inside strings and between a key and its value", () => {
    const call = (index: number, part: Record<string, unknown>) =>
      chunk({ tool_calls: [{ index, ...part }] });
    const text = stream(
      chunk({ role: "assistant", content: null }),
      call(0, { id: "call_a", type: "function", function: { name: "lookup", arguments: "" } }),
      call(1, {
        id: "call_b",
        type: "function",
        function: { name: "mcp__notes__lookup", arguments: '{"ke' },
      }),
      call(0, { function: { arguments: '{"key": "rel' } }),
      call(1, { function: { arguments: 'y": "Zürich ' } }),
      call(0, { function: { arguments: 'ease"}' } }),
      call(1, { function: { arguments: '🚀"}' } }),
      chunk({}, "tool_calls"),
      { data: { ...head, choices: [], usage } },
      DONE,
    );
    const answer = (streamedAnswer(text, "chat") as { answer: { choices: unknown[] } }).answer;
    expect(answer.choices).toEqual([
      {
        index: 0,
        message: {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "call_a", type: "function", function: { name: "lookup", arguments: '{"key": "release"}' } },
            {
              id: "call_b",
              type: "function",
              function: { name: "mcp__notes__lookup", arguments: '{"key": "Zürich 🚀"}' },
            },
          ],
        },
        finish_reason: "tool_calls",
      },
    ]);
  });

  it("reasoning in reasoning_content (DeepSeek, vLLM) and in reasoning (Groq, Ollama) is joined into the field it came in", () => {
    const text = stream(
      chunk({ role: "assistant", reasoning_content: "The user " }),
      chunk({ reasoning_content: "wants a word." }),
      chunk({ content: "Hi." }),
      chunk({}, "stop"),
      DONE,
    );
    expect((streamedAnswer(text, "chat") as { answer: { choices: unknown[] } }).answer.choices).toEqual([
      {
        index: 0,
        message: { role: "assistant", content: "Hi.", reasoning_content: "The user wants a word." },
        finish_reason: "stop",
      },
    ]);
    const groq = stream(chunk({ reasoning: "Think" }), chunk({ reasoning: "ing." }), chunk({}, "stop"), DONE);
    expect((streamedAnswer(groq, "chat") as { answer: { choices: unknown[] } }).answer.choices).toEqual([
      {
        index: 0,
        message: { role: "assistant", content: null, reasoning: "Thinking." },
        finish_reason: "stop",
      },
    ]);
  });

  it("a call sent whole in one chunk without an index (Gemini's endpoint) keeps its thought signature; the next id starts the next call", () => {
    const text = stream(
      chunk({
        tool_calls: [
          {
            id: "g1",
            type: "function",
            function: { name: "a", arguments: "{}" },
            extra_content: { google: { thought_signature: "sig-1" } },
          },
        ],
      }),
      chunk({ tool_calls: [{ id: "g2", type: "function", function: { name: "b", arguments: '{"x":1}' } }] }),
      chunk({}, "tool_calls"),
      DONE,
    );
    expect(firstMessage(text)).toEqual({
      role: "assistant",
      content: null,
      tool_calls: [
        {
          id: "g1",
          type: "function",
          function: { name: "a", arguments: "{}" },
          extra_content: { google: { thought_signature: "sig-1" } },
        },
        { id: "g2", type: "function", function: { name: "b", arguments: '{"x":1}' } },
      ],
    });
  });

  it("parallel calls a server sends all at index 0, each with its own id (Ollama), stay apart: a later piece without an id goes on the last one started", () => {
    const text = stream(
      chunk({ role: "assistant", content: "" }),
      chunk({
        tool_calls: [
          { id: "call_a", index: 0, type: "function", function: { name: "lookup", arguments: '{"key":' } },
        ],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"k1"}' } }] }),
      chunk({
        tool_calls: [
          { id: "call_b", index: 0, type: "function", function: { name: "ping", arguments: "{}" } },
        ],
      }),
      // A call's id again on a later piece of it (as servers repeat it) goes on that call.
      chunk({
        tool_calls: [
          { id: "call_c", index: 0, type: "function", function: { name: "lookup", arguments: '{"key":' } },
        ],
      }),
      chunk({ tool_calls: [{ id: "call_c", index: 0, function: { arguments: '"k2"}' } }] }),
      chunk({}, "tool_calls"),
      DONE,
    );
    expect(firstMessage(text)).toEqual(
      callsMessage(
        ["call_a", "lookup", '{"key":"k1"}'],
        ["call_b", "ping", "{}"],
        ["call_c", "lookup", '{"key":"k2"}'],
      ),
    );
  });

  it("a call whose later pieces carry another id (Poolside) stays one call; a piece at an index no call started at goes on the last call started", () => {
    const piece = (index: number, part: Record<string, unknown>) =>
      chunk({ tool_calls: [{ index, ...part }] });
    const text = stream(
      piece(0, { id: "call_a", type: "function", function: { name: "lookup", arguments: "" } }),
      piece(0, { id: "call_other", function: { arguments: '{"key":"k1"}' } }),
      // The second call's first piece at the first call's index, its later pieces at its own.
      piece(0, { id: "call_b", type: "function", function: { name: "ping", arguments: '{"n":' } }),
      piece(1, { function: { arguments: "1}" } }),
      chunk({}, "tool_calls"),
      DONE,
    );
    expect(firstMessage(text)).toEqual(
      callsMessage(["call_a", "lookup", '{"key":"k1"}'], ["call_b", "ping", '{"n":1}']),
    );
  });

  it("a whole chat.completion sent as one event (a gateway streaming an answer it had whole) is that answer: its text and its calls", () => {
    const whole = {
      ...head,
      object: "chat.completion",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: "Looking.",
            tool_calls: [
              { type: "function", function: { name: "a", arguments: "{}" } },
              { type: "function", function: { name: "b", arguments: '{"x":1}' } },
            ],
          },
          finish_reason: "tool_calls",
        },
      ],
      usage,
    };
    const choices = (
      streamedAnswer(stream({ data: whole }, DONE), "chat") as { answer: { choices: unknown[] } }
    ).answer.choices;
    // Read as it was sent: the same choice, its text and both calls.
    expect(choices).toEqual(whole.choices);
  });

  it("the legacy function_call streamed in pieces (older servers) is assembled as the one call it names", () => {
    const text = stream(
      chunk({ role: "assistant", function_call: { name: "lookup", arguments: "" } }),
      chunk({ function_call: { arguments: '{"key":' } }),
      chunk({ function_call: { arguments: ' "k1"}' } }),
      chunk({}, "function_call"),
      DONE,
    );
    const choices = (streamedAnswer(text, "chat") as { answer: { choices: unknown[] } }).answer.choices;
    expect(choices).toEqual([
      {
        index: 0,
        message: {
          role: "assistant",
          content: null,
          function_call: { name: "lookup", arguments: '{"key": "k1"}' },
        },
        finish_reason: "function_call",
      },
    ]);
  });

  it("CRLF line ends, comments (keep-alives), a data field split over two lines and no space after the colon are read", () => {
    const text = [
      ": OPENROUTER PROCESSING",
      "",
      `data:${JSON.stringify(chunk({ content: "a" }).data)}`,
      "",
      `data: {"id":"chatcmpl-7","choices":[{"index":0,`,
      `data: "delta":{"content":"b"},"finish_reason":"stop"}]}`,
      "",
      "data: [DONE]",
      "",
      "",
    ].join("\r\n");
    expect(firstMessage(text)).toEqual({ role: "assistant", content: "ab" });
  });

  it("an error chunk in the stream (OpenRouter's, vLLM's) is the answer's error, as a body of its own would be; a server's, an overload's or a rate limit's is transient", () => {
    const errorChunk = (error: unknown) =>
      stream(chunk({ content: "The build fai" }), {
        data: { ...head, error, choices: [{ index: 0, delta: { content: "" }, finish_reason: "error" }] },
      });
    const upstream = { code: 502, message: "Upstream error from Together: connection reset" };
    expect(streamedAnswer(errorChunk(upstream), "chat")).toEqual({
      answer: { error: upstream },
      transient: true,
    });
    const limited = { message: "Rate limit reached", type: "requests", code: "rate_limit_exceeded" };
    expect(streamedAnswer(errorChunk(limited), "chat")).toEqual({
      answer: { error: limited },
      transient: true,
    });
    // What another try would meet again: not transient.
    const refused = { code: 400, message: "context_length_exceeded" };
    expect(streamedAnswer(errorChunk(refused), "chat")).toEqual({ answer: { error: refused } });
    const policy = { message: "flagged", type: "invalid_request_error", code: "content_policy_violation" };
    expect(streamedAnswer(errorChunk(policy), "chat")).toEqual({ answer: { error: policy } });
    // An error written as the chunk itself (`"object": "error"`), its type at the top.
    const own = { object: "error", type: "server_error", message: "The server had an error" };
    expect(streamedAnswer(stream({ data: own }), "chat")).toEqual({ answer: own, transient: true });
  });

  it('an error chunk whose code is its HTTP status written as text (LiteLLM\'s proxy: "code": "429") is transient as the number is', () => {
    const errorChunk = (error: unknown) => stream(chunk({ content: "The build fai" }), { data: { error } });
    for (const code of ["429", "500", "503", "408"]) {
      const error = {
        message: "litellm.ServiceUnavailableError: upstream",
        type: "None",
        param: "None",
        code,
      };
      expect(streamedAnswer(errorChunk(error), "chat")).toEqual({ answer: { error }, transient: true });
    }
    const refused = { message: "litellm.BadRequestError: bad", type: "None", param: "None", code: "400" };
    expect(streamedAnswer(errorChunk(refused), "chat")).toEqual({ answer: { error: refused } });
  });

  it("a stream cut off before data: [DONE] is said so, not taken as a whole answer, and marked transient (a later try may get the whole answer)", () => {
    const text = stream(chunk({ content: "The build" }), chunk({ content: " is" }));
    expect(streamedAnswer(text, "chat")).toEqual({
      problem:
        "an event stream (text/event-stream) cut off before its end (no data: [DONE] after 2 events) — the server, or a proxy in front of it, ended the answer early",
      transient: true,
    });
    // Cut inside an event: the last event's JSON is unfinished.
    expect(streamedAnswer(`${text}data: {"id":"chatcmpl-7","choi`, "chat")).toEqual({
      problem:
        "an event stream (text/event-stream) cut off before its end (no data: [DONE] after 2 events) — the server, or a proxy in front of it, ended the answer early",
      transient: true,
    });
  });

  it("a stream that ends after every choice finished, without data: [DONE], is whole; cut inside an event it is not", () => {
    const text = stream(chunk({ content: "The build" }), chunk({ content: " is green" }, "stop"), {
      data: { ...head, choices: [], usage },
    });
    expect(streamedAnswer(text, "chat")).toEqual({ answer: textCompletion("The build is green") });
    // The body ended inside an event after the finish: what followed (usage, more choices) is lost.
    expect(streamedAnswer(`${text}data: {"id":"chatcmpl-7","choi`, "chat")).toEqual({
      problem:
        "an event stream (text/event-stream) cut off before its end (no data: [DONE] after 3 events) — the server, or a proxy in front of it, ended the answer early",
      transient: true,
    });
    // One of two choices finished: the other was cut off.
    const half = stream(chunk({ content: "a" }, "stop", 0), chunk({ content: "b" }, null, 1));
    expect(streamedAnswer(half, "chat")).toEqual({
      problem:
        "an event stream (text/event-stream) cut off before its end (no data: [DONE] after 2 events) — the server, or a proxy in front of it, ended the answer early",
      transient: true,
    });
  });

  it("an event that is not JSON, an empty stream and a stream of the other API are refused, naming what was wrong", () => {
    expect(streamedAnswer(stream(chunk({ content: "a" }), { data: "{oops" }, DONE), "chat")).toEqual({
      problem: "an event stream (text/event-stream) whose event 2 is not JSON: data: {oops",
    });
    expect(streamedAnswer("", "chat")).toEqual({
      problem: "an event stream (text/event-stream) with no events: an empty body",
    });
    expect(streamedAnswer("<html><body>Bad gateway</body></html>", "chat")).toEqual({
      problem: "an event stream (text/event-stream) with no events: <html><body>Bad gateway</body></html>",
    });
    expect(
      streamedAnswer(
        stream({ event: "message_start", data: { type: "message_start", message: {} } }),
        "chat",
      ),
    ).toEqual({
      problem:
        "an event stream (text/event-stream) of Messages API events, not the Chat Completions chunks a /chat/completions request is answered with — check agent.provider",
    });
    expect(streamedAnswer(stream({ data: { type: "response.created", response: {} } }), "chat")).toEqual({
      problem:
        'an event stream (text/event-stream) of neither Chat Completions chunks nor Messages API events; its first event: data: {"type":"response.created","response":{}}',
    });
  });
});

const message = { id: "msg_01", type: "message", role: "assistant", model: "claude-x" };
const start = (extra: Record<string, unknown> = {}) => ({
  event: "message_start",
  data: {
    type: "message_start",
    message: {
      ...message,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 25, output_tokens: 1, ...extra },
    },
  },
});
const block = (index: number, content_block: unknown) => ({
  event: "content_block_start",
  data: { type: "content_block_start", index, content_block },
});
const delta = (index: number, d: unknown) => ({
  event: "content_block_delta",
  data: { type: "content_block_delta", index, delta: d },
});
const stop = (index: number) => ({
  event: "content_block_stop",
  data: { type: "content_block_stop", index },
});
const messageDelta = (stop_reason: string, output_tokens: number) => ({
  event: "message_delta",
  data: { type: "message_delta", delta: { stop_reason, stop_sequence: null }, usage: { output_tokens } },
});
const MESSAGE_STOP = { event: "message_stop", data: { type: "message_stop" } };
const PING = { event: "ping", data: { type: "ping" } };

describe("streamedAnswer: Messages API events assembled into the message a request without stream gets", () => {
  it("text and a tool_use whose input comes in input_json_delta pieces split inside a string; pings ignored", () => {
    const text = stream(
      start(),
      PING,
      block(0, { type: "text", text: "" }),
      delta(0, { type: "text_delta", text: "Let me " }),
      delta(0, { type: "text_delta", text: "look — ✓." }),
      stop(0),
      block(1, { type: "tool_use", id: "toolu_01", name: "mcp__notes__lookup", input: {} }),
      delta(1, { type: "input_json_delta", partial_json: "" }),
      delta(1, { type: "input_json_delta", partial_json: '{"key": "Zü' }),
      PING,
      delta(1, { type: "input_json_delta", partial_json: 'rich", "n": [1, 2' }),
      delta(1, { type: "input_json_delta", partial_json: "]}" }),
      stop(1),
      messageDelta("tool_use", 48),
      MESSAGE_STOP,
    );
    expect(streamedAnswer(text, "messages")).toEqual({
      answer: {
        ...message,
        content: [
          { type: "text", text: "Let me look — ✓." },
          {
            type: "tool_use",
            id: "toolu_01",
            name: "mcp__notes__lookup",
            input: { key: "Zürich", n: [1, 2] },
          },
        ],
        stop_reason: "tool_use",
        stop_sequence: null,
        usage: { input_tokens: 25, output_tokens: 48 },
      },
    });
  });

  it("a tool_use without input deltas keeps its empty input; thinking and its signature are assembled", () => {
    const text = stream(
      start({ cache_read_input_tokens: 0 }),
      block(0, { type: "thinking", thinking: "", signature: "" }),
      delta(0, { type: "thinking_delta", thinking: "The user wants " }),
      delta(0, { type: "thinking_delta", thinking: "the list." }),
      delta(0, { type: "signature_delta", signature: "EqQBCgIYAhIM" }),
      stop(0),
      block(1, { type: "tool_use", id: "toolu_02", name: "list", input: {} }),
      stop(1),
      messageDelta("tool_use", 20),
      MESSAGE_STOP,
    );
    expect(streamedAnswer(text, "messages")).toEqual({
      answer: {
        ...message,
        content: [
          { type: "thinking", thinking: "The user wants the list.", signature: "EqQBCgIYAhIM" },
          { type: "tool_use", id: "toolu_02", name: "list", input: {} },
        ],
        stop_reason: "tool_use",
        stop_sequence: null,
        usage: { input_tokens: 25, output_tokens: 20, cache_read_input_tokens: 0 },
      },
    });
  });

  it("an error event is the answer's error, with its type and message, as an error answer's body is", () => {
    const text = stream(
      start(),
      block(0, { type: "text", text: "" }),
      delta(0, { type: "text_delta", text: "Partial" }),
      { event: "error", data: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } } },
    );
    expect(streamedAnswer(text, "messages")).toEqual({
      answer: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
      transient: true,
    });
    // A request the API refuses whatever the try: not transient.
    const refused = {
      type: "error",
      error: { type: "invalid_request_error", message: "prompt is too long" },
    };
    expect(streamedAnswer(stream(start(), { event: "error", data: refused }), "messages")).toEqual({
      answer: refused,
    });
  });

  it("a tool_use whose input a cut (max_tokens, the context window, a refusal) left unfinished is kept with an empty input: the turn was cut, not malformed", () => {
    for (const reason of ["max_tokens", "model_context_window_exceeded", "refusal"]) {
      const cut = stream(
        start(),
        block(0, { type: "text", text: "" }),
        delta(0, { type: "text_delta", text: "Looking." }),
        stop(0),
        block(1, { type: "tool_use", id: "toolu_04", name: "lookup", input: {} }),
        delta(1, { type: "input_json_delta", partial_json: '{"key": "Zü' }),
        stop(1),
        messageDelta(reason, 4096),
        MESSAGE_STOP,
      );
      expect(streamedAnswer(cut, "messages")).toEqual({
        answer: {
          ...message,
          content: [
            { type: "text", text: "Looking." },
            { type: "tool_use", id: "toolu_04", name: "lookup", input: {} },
          ],
          stop_reason: reason,
          stop_sequence: null,
          usage: { input_tokens: 25, output_tokens: 4096 },
        },
      });
    }
  });

  it("a stream cut off before message_stop, a tool input that is not JSON and a stream of the other API are refused", () => {
    const cut = stream(
      start(),
      block(0, { type: "text", text: "" }),
      delta(0, { type: "text_delta", text: "Hi" }),
    );
    expect(streamedAnswer(cut, "messages")).toEqual({
      problem:
        "an event stream (text/event-stream) cut off before its end (no message_stop event after 3 events) — the server, or a proxy in front of it, ended the answer early",
      transient: true,
    });
    const badInput = stream(
      start(),
      block(0, { type: "tool_use", id: "toolu_03", name: "lookup", input: {} }),
      delta(0, { type: "input_json_delta", partial_json: '{"key": ' }),
      stop(0),
      messageDelta("tool_use", 5),
      MESSAGE_STOP,
    );
    expect(streamedAnswer(badInput, "messages")).toEqual({
      problem:
        'an event stream (text/event-stream) whose tool_use block 0 ("lookup") has an input that is not JSON: {"key":',
    });
    expect(streamedAnswer(stream(chunk({ content: "a" }), DONE), "messages")).toEqual({
      problem:
        "an event stream (text/event-stream) of Chat Completions chunks, not the Messages API events a /messages request is answered with — check agent.provider",
    });
    const headless = stream(
      block(0, { type: "text", text: "" }),
      stop(0),
      messageDelta("end_turn", 1),
      MESSAGE_STOP,
    );
    expect(streamedAnswer(headless, "messages")).toEqual({
      problem: "an event stream (text/event-stream) of Messages API events without a message_start event",
    });
    expect(streamedAnswer(stream(start(), { event: "content_block_delta", data: "{]" }), "messages")).toEqual(
      {
        problem: "an event stream (text/event-stream) whose event 2 is not JSON: data: {]",
      },
    );
  });

  it("a stream whose body ends after the message_delta with its stop reason, without message_stop (as some proxies end it), is the whole answer; one cut before that stop reason, or inside an open block, is still cut off", () => {
    const whole = [
      start(),
      block(0, { type: "text", text: "" }),
      delta(0, { type: "text_delta", text: "Hi" }),
      stop(0),
      messageDelta("end_turn", 2),
    ] as const;
    expect(streamedAnswer(stream(...whole), "messages")).toEqual(
      streamedAnswer(stream(...whole, MESSAGE_STOP), "messages"),
    );
    expect(streamedAnswer(stream(...whole, PING), "messages")).toMatchObject({
      answer: { stop_reason: "end_turn", content: [{ type: "text", text: "Hi" }] },
    });
    const cutOff = {
      problem: expect.stringContaining("cut off before its end (no message_stop event"),
      transient: true,
    };
    expect(streamedAnswer(stream(...whole.slice(0, 4)), "messages")).toEqual(cutOff);
    const openBlock = stream(
      start(),
      block(0, { type: "tool_use", id: "toolu_04", name: "lookup", input: {} }),
      delta(0, { type: "input_json_delta", partial_json: '{"key": "k1"}' }),
      messageDelta("tool_use", 5),
    );
    expect(streamedAnswer(openBlock, "messages")).toEqual(cutOff);
    // The body cut inside the message_delta event itself.
    const text = stream(...whole);
    expect(streamedAnswer(text.slice(0, text.length - 12), "messages")).toEqual(cutOff);
  });

  it("a message_delta whose delta holds a __proto__ key sets no prototype: a stop reason only there does not make a stream cut before message_stop whole", () => {
    // A message_start whose message has no stop_reason of its own (some proxies leave the nulls out).
    const { stop_reason: _, ...bare } = start().data.message;
    const text = stream(
      { event: "message_start", data: { type: "message_start", message: bare } },
      block(0, { type: "text", text: "" }),
      delta(0, { type: "text_delta", text: "Hi" }),
      stop(0),
      // Written as text: an object literal's __proto__ would set the literal's prototype, not a key.
      {
        event: "message_delta",
        data: '{"type":"message_delta","delta":{"__proto__":{"stop_reason":"end_turn"},"stop_sequence":null}}',
      },
    );
    expect(streamedAnswer(text, "messages")).toEqual({
      problem: expect.stringContaining("cut off before its end (no message_stop event"),
      transient: true,
    });
  });

  it("a delta for a block no content_block_start began is refused, naming it: its text was dropped before, an empty reply delivered as the answer", () => {
    const orphan = stream(
      start(),
      delta(0, { type: "text_delta", text: "The build is green." }),
      messageDelta("end_turn", 5),
      MESSAGE_STOP,
    );
    expect(streamedAnswer(orphan, "messages")).toEqual({
      problem:
        "an event stream (text/event-stream) whose content_block_delta event 2 is for block 0, which no content_block_start began",
    });
    const late = stream(
      start(),
      block(0, { type: "text", text: "" }),
      stop(0),
      delta(1, { type: "input_json_delta", partial_json: "{}" }),
      block(1, { type: "tool_use", id: "toolu_05", name: "lookup", input: {} }),
      stop(1),
      messageDelta("tool_use", 5),
      MESSAGE_STOP,
    );
    expect(streamedAnswer(late, "messages")).toEqual({
      problem:
        "an event stream (text/event-stream) whose content_block_delta event 4 is for block 1, which no content_block_start began",
    });
  });

  it("an event named error whose data has neither API's error shape is that error, quoted, not a stream cut off", () => {
    const said = { message: "upstream timeout" };
    expect(
      streamedAnswer(stream(chunk({ content: "The build" }), { event: "error", data: said }), "chat"),
    ).toEqual({ answer: { error: said } });
    expect(streamedAnswer(stream({ event: "error", data: said }), "chat")).toEqual({
      answer: { error: said },
    });
    expect(streamedAnswer(stream(start(), { event: "error", data: { error: said } }), "messages")).toEqual({
      answer: { type: "error", error: said },
    });
    // Its kind, where it names one, still decides whether another try may pass.
    const overloaded = { type: "overloaded_error", message: "Overloaded" };
    expect(
      streamedAnswer(stream(start(), { event: "error", data: { error: overloaded } }), "messages"),
    ).toEqual({
      answer: { type: "error", error: overloaded },
      transient: true,
    });
  });
});
