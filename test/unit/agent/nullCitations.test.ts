import { afterEach, describe, expect, it } from "vitest";
import type { AgentTool } from "../../../src/agent/tools/tool.js";
import { type FakeModel, startFakeAnthropic } from "../../fakes/anthropicServer.js";
import { anthropicRunner } from "../../helpers/anthropicRunner.js";

/**
 * Text blocks written with `"citations": null`, as the Messages API reference shows a text block and as
 * gateways that re-encode answers through Anthropic's SDK types write every one (docs/agent.md, `anthropic`).
 */

const calls: unknown[] = [];
const lookup: AgentTool = {
  name: "lookup",
  description: "Looks a key up",
  inputSchema: { type: "object", properties: { key: { type: "string" } } },
  async execute(args) {
    calls.push(args);
    return { ok: true, content: [{ type: "text", text: "k1 is 42" }] };
  },
};

let model: FakeModel | undefined;
afterEach(async () => {
  calls.length = 0;
  await model?.close();
});

function run(baseUrl: string) {
  return anthropicRunner(baseUrl, [lookup]).run(
    { route: "r", event: "e", deliveryId: "d", prompt: "look up k1", toolsets: [], profile: undefined },
    new AbortController().signal,
  );
}

describe("a Messages API answer whose text blocks carry citations: null", () => {
  for (const streamAlways of [false, true])
    it(`${streamAlways ? "streamed" : "as JSON"}: the tool runs once with its arguments, the reply is delivered, and the text goes back without the null`, async () => {
      model = await startFakeAnthropic({ streamAlways });
      model.script(
        { text: "Let me look.", toolCalls: [{ name: "lookup", args: { key: "k1" } }], nullCitations: true },
        { text: "k1 is 42.", nullCitations: true },
      );
      const result = await run(model.baseUrl);
      expect(result.text).toBe("k1 is 42.");
      expect(calls).toEqual([{ key: "k1" }]);
      const messages = (model.requests[1]?.json.messages ?? []) as Array<Record<string, unknown>>;
      expect(messages[1]).toEqual({
        role: "assistant",
        content: [
          { type: "text", text: "Let me look." },
          { type: "tool_use", id: "toolu_0_0", name: "lookup", input: { key: "k1" } },
        ],
      });
    });
});
