import { afterEach, describe, expect, it } from "vitest";
import type { AgentTool } from "../../../src/agent/tools/tool.js";
import { type FakeModel, startFakeOpenAI } from "../../fakes/openaiServer.js";
import { testModelRunner } from "../../helpers/testModelRunner.js";

/**
 * A Chat Completions answer whose `content` is an array of parts is read as one text, so what a text gets
 * applies to it (docs/agent.md, `base_url` and Content filters and refusals): a `refusal` part is delivered
 * as the reply, `output_text` parts are text, thinking at the start of a text part is not part of the reply,
 * and Magistral's `thinking` parts stay reasoning that goes back with the turn. Real sockets on 127.0.0.1,
 * the answer as JSON and as a stream.
 */

const upper: AgentTool = {
  name: "upper",
  description: "Upper-cases text",
  inputSchema: { type: "object", properties: { text: { type: "string" } } },
  async execute(args) {
    return {
      ok: true,
      content: [{ type: "text", text: String((args as { text?: unknown }).text).toUpperCase() }],
    };
  },
};

let model: FakeModel | undefined;
afterEach(async () => {
  await model?.close();
});

function run(baseUrl: string) {
  return testModelRunner({ provider: "openai", model: "m", base_url: baseUrl }, [upper]).run(
    { route: "r", event: "e", deliveryId: "d", prompt: "p", toolsets: [], profile: undefined },
    new AbortController().signal,
  );
}

for (const streamAlways of [false, true])
  describe(`content as an array of parts (${streamAlways ? "streamed" : "as JSON"})`, () => {
    it("a refusal part is delivered as the reply", async () => {
      model = await startFakeOpenAI({ streamAlways });
      model.script({ contentParts: [{ type: "refusal", refusal: "I can't help with that." }] });
      expect((await run(model.baseUrl)).text).toBe("I can't help with that.");
    });

    it("output_text parts are the reply, joined with text parts", async () => {
      model = await startFakeOpenAI({ streamAlways });
      model.script({
        contentParts: [
          { type: "output_text", text: "The build " },
          { type: "text", text: "passed." },
        ],
      });
      expect((await run(model.baseUrl)).text).toBe("The build passed.");
    });

    it("thinking at the start of the text parts is not part of the reply, and goes back as reasoning", async () => {
      model = await startFakeOpenAI({ streamAlways });
      model.script(
        {
          contentParts: [
            { type: "text", text: "<think>secret plan</think>" },
            { type: "text", text: "Upper-casing it." },
          ],
          toolCalls: [{ name: "upper", args: { text: "hi" } }],
        },
        { contentParts: [{ type: "text", text: "<think>done thinking</think>\n\nHI it is" }] },
      );
      expect((await run(model.baseUrl)).text).toBe("HI it is");
      const messages = (model.requests[1]?.json.messages ?? []) as Array<Record<string, unknown>>;
      expect(messages.find((m) => m.role === "assistant")).toMatchObject({
        content: "Upper-casing it.",
        reasoning_content: "secret plan",
      });
    });

    it("Magistral's thinking parts stay reasoning: not in the reply, back with the turn", async () => {
      model = await startFakeOpenAI({ streamAlways });
      model.script(
        {
          contentParts: [
            { type: "thinking", thinking: [{ type: "text", text: "call upper" }] },
            { type: "text", text: "Checking." },
          ],
          toolCalls: [{ name: "upper", args: { text: "hi" } }],
        },
        {
          contentParts: [
            { type: "thinking", thinking: [{ type: "text", text: "got it" }] },
            { type: "text", text: "HI it is" },
          ],
        },
      );
      expect((await run(model.baseUrl)).text).toBe("HI it is");
      const messages = (model.requests[1]?.json.messages ?? []) as Array<Record<string, unknown>>;
      expect(messages.find((m) => m.role === "assistant")).toMatchObject({
        content: "Checking.",
        reasoning_content: "call upper",
      });
    });
  });
