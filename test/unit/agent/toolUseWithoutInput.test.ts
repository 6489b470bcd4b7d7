import { afterEach, describe, expect, it } from "vitest";
import type { AgentTool } from "../../../src/agent/tools/tool.js";
import { type FakeModel, startFakeAnthropic } from "../../fakes/anthropicServer.js";
import { anthropicRunner } from "../../helpers/anthropicRunner.js";

/**
 * A Messages API `tool_use` without an `input`, with `"input": null`, or with an empty or blank text for it,
 * as proxies that write the API's answers from their own types send a call of a tool without arguments, is a
 * call with `{}`, as empty Chat Completions arguments are; an answer with `"content": null` is one with no
 * content (docs/agent.md, Malformed tool calls). Real sockets on 127.0.0.1.
 */

const calls: unknown[] = [];
const status: AgentTool = {
  name: "status",
  description: "Says how the service is",
  inputSchema: { type: "object", properties: {} },
  async execute(args) {
    calls.push(args);
    return { ok: true, content: [{ type: "text", text: "all green" }] };
  },
};

let model: FakeModel | undefined;
afterEach(async () => {
  calls.length = 0;
  await model?.close();
});

function run(baseUrl: string) {
  return anthropicRunner(baseUrl, [status]).run(
    { route: "r", event: "e", deliveryId: "d", prompt: "how is it", toolsets: [], profile: undefined },
    new AbortController().signal,
  );
}

const inputs = [
  ["no input", "absent"],
  ["input null", "null"],
  ['input ""', { text: "" }],
  ['input " \\n"', { text: " \n" }],
] as const;

describe("a Messages API tool_use without arguments written without an object", () => {
  for (const streamAlways of [false, true])
    for (const [label, inputAs] of inputs)
      it(`${streamAlways ? "streamed" : "as JSON"}, ${label}: the tool runs with {}, the turn goes back with {}, and the reply is delivered`, async () => {
        model = await startFakeAnthropic({ streamAlways });
        model.script({ toolCalls: [{ name: "status", args: {}, inputAs }] }, { text: "It is all green." });
        const result = await run(model.baseUrl);
        expect(result.text).toBe("It is all green.");
        expect(calls).toEqual([{}]);
        expect(result.record?.toolCalls).toEqual([{ name: "status", ms: expect.any(Number), ok: true }]);
        const messages = (model.requests[1]?.json.messages ?? []) as Array<{ content: unknown }>;
        expect(messages[1]?.content).toEqual([
          { type: "tool_use", id: "toolu_0_0", name: "status", input: {} },
        ]);
        expect(JSON.stringify(messages[2]?.content)).toContain("all green");
      });
});

describe('a Messages API answer with "content": null', () => {
  for (const streamAlways of [false, true])
    it(`${streamAlways ? "streamed" : "as JSON"}, stop_reason end_turn: read as no content, delivered as the empty reply content [] is, not failing the run`, async () => {
      model = await startFakeAnthropic({ streamAlways });
      model.script({ nullContent: true }, { nullContent: true, text: "unused" });
      const result = await run(model.baseUrl);
      expect(result.text).toBe("");
      expect(result.record?.outcome).toBe("ok");
    });
});
