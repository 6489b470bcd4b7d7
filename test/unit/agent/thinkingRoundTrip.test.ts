import { afterEach, describe, expect, it } from "vitest";
import type { AgentTool } from "../../../src/agent/tools/tool.js";
import { type FakeModel, startFakeAnthropic } from "../../fakes/anthropicServer.js";
import { anthropicRunner } from "../../helpers/anthropicRunner.js";

/**
 * Claude's thinking before its tool calls, written as the Messages API streams it (a `thinking` block whose
 * signature comes in a `signature_delta`, a `redacted_thinking` block), goes back unchanged with its turn:
 * the API refuses a follow-up whose thinking was altered or left out.
 */

const calls: Array<{ tool: string; args: unknown }> = [];
const tool = (name: string): AgentTool => ({
  name,
  description: name,
  inputSchema: { type: "object", properties: { city: { type: "string" } } },
  async execute(args) {
    calls.push({ tool: name, args });
    return { ok: true, content: [{ type: "text", text: `${name}: 21°C` }] };
  },
});

const SIGNATURE = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds";
const REDACTED = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP";

/** `events` as the Messages API writes its stream: an `event:` line naming each event's type. */
const eventStream = (events: ReadonlyArray<Record<string, unknown>>) => ({
  status: 200,
  headers: { "content-type": "text/event-stream" },
  body: events.map((e) => `event: ${String(e.type)}\ndata: ${JSON.stringify(e)}\n\n`).join(""),
});
const delta = (index: number, body: Record<string, unknown>) => ({
  type: "content_block_delta",
  index,
  delta: body,
});
const stop = (index: number) => ({ type: "content_block_stop", index });
const toolUse = (index: number, id: string, name: string) => ({
  type: "content_block_start",
  index,
  content_block: { type: "tool_use", id, name, input: {} },
});

let model: FakeModel | undefined;
afterEach(async () => {
  calls.length = 0;
  await model?.close();
});

describe("thinking streamed before parallel tool calls", () => {
  it("each tool runs once with its arguments, the reply is delivered, and the thinking goes back first and unchanged", async () => {
    model = await startFakeAnthropic();
    model.script(
      eventStream([
        {
          type: "message_start",
          message: {
            id: "msg_1",
            type: "message",
            role: "assistant",
            model: "claude-sonnet-4-5",
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: { input_tokens: 12, output_tokens: 1 },
          },
        },
        { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "" } },
        delta(0, { type: "thinking_delta", thinking: "Two cities, " }),
        delta(0, { type: "thinking_delta", thinking: "two calls." }),
        delta(0, { type: "signature_delta", signature: SIGNATURE }),
        stop(0),
        {
          type: "content_block_start",
          index: 1,
          content_block: { type: "redacted_thinking", data: REDACTED },
        },
        stop(1),
        { type: "ping" },
        toolUse(2, "toolu_a", "weather"),
        // The API's first piece of a tool's input is often empty; this one is cut inside an escape.
        delta(2, { type: "input_json_delta", partial_json: "" }),
        delta(2, { type: "input_json_delta", partial_json: '{"city": "Z\\u00' }),
        delta(2, { type: "input_json_delta", partial_json: 'fcrich"}' }),
        stop(2),
        { type: "content_block_start", index: 3, content_block: { type: "text", text: "" } },
        delta(3, { type: "text_delta", text: "Checking both." }),
        stop(3),
        // No input deltas at all: the block's own empty input is the call's.
        toolUse(4, "toolu_b", "forecast"),
        stop(4),
        {
          type: "message_delta",
          delta: { stop_reason: "tool_use", stop_sequence: null },
          usage: { output_tokens: 40 },
        },
        { type: "message_stop" },
      ]),
      { text: "Zürich is 21°C." },
    );
    const result = await anthropicRunner(model.baseUrl, [tool("weather"), tool("forecast")]).run(
      {
        route: "r",
        event: "e",
        deliveryId: "d",
        prompt: "weather in Zürich",
        toolsets: [],
        profile: undefined,
      },
      new AbortController().signal,
    );
    expect(result.text).toBe("Zürich is 21°C.");
    expect(calls).toEqual([
      { tool: "weather", args: { city: "Zürich" } },
      { tool: "forecast", args: {} },
    ]);
    const messages = (model.requests[1]?.json.messages ?? []) as Array<{ role: string; content: unknown[] }>;
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(messages[1]?.content.slice(0, 2)).toEqual([
      { type: "thinking", thinking: "Two cities, two calls.", signature: SIGNATURE },
      { type: "redacted_thinking", data: REDACTED },
    ]);
    expect(messages[2]?.content).toEqual([
      { type: "tool_result", tool_use_id: "toolu_a", content: "weather: 21°C" },
      { type: "tool_result", tool_use_id: "toolu_b", content: "forecast: 21°C" },
    ]);
  });
});
