import { afterEach, describe, expect, it } from "vitest";
import { AgentRunFailure } from "../../../src/actors/agent/runner.js";
import type { AgentTool } from "../../../src/agent/tools/tool.js";
import { type FakeModel, startFakeAnthropic } from "../../fakes/anthropicServer.js";
import { anthropicRunner } from "../../helpers/anthropicRunner.js";

/**
 * The Messages API's 400 for a request past the model's context window, as a run's tool results pile up:
 * the failure names what makes a run's requests long (docs/agent.md, A run that fails).
 */

const TOO_LONG = JSON.stringify({
  type: "error",
  error: { type: "invalid_request_error", message: "prompt is too long: 215123 tokens > 200000 maximum" },
});

const dump: AgentTool = {
  name: "dump",
  description: "Dumps a log",
  inputSchema: { type: "object", properties: {} },
  async execute() {
    return { ok: true, content: [{ type: "text", text: "log line\n".repeat(1000) }] };
  },
};

let model: FakeModel | undefined;
afterEach(() => model?.close());

describe("a Messages API refusal of a prompt past the model's context window", () => {
  it("fails the run once, naming agent.max_tool_result_chars: no retry passes it", async () => {
    model = await startFakeAnthropic();
    model.script({ toolCalls: [{ name: "dump", args: {} }] }, { status: 400, body: TOO_LONG });
    const failure = await anthropicRunner(model.baseUrl, [dump], { retries: 2 })
      .run(
        { route: "r", event: "e", deliveryId: "d", prompt: "read the log", toolsets: [], profile: undefined },
        new AbortController().signal,
      )
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(AgentRunFailure);
    expect((failure as AgentRunFailure).message).toBe(
      `model endpoint ${model.baseUrl}/messages answered HTTP 400: ${TOO_LONG} — the prompt and the run's tool results so far fill the model's context (200000 tokens): lower agent.max_tool_result_chars (100000), or use a model with a larger context`,
    );
    expect(model.requests).toHaveLength(2);
  });

  it("on the run's first request, before any tool result, names the route's prompt, not agent.max_tool_result_chars", async () => {
    model = await startFakeAnthropic();
    model.script({ status: 400, body: TOO_LONG });
    const failure = await anthropicRunner(model.baseUrl, [dump], { retries: 2 })
      .run(
        {
          route: "r",
          event: "e",
          deliveryId: "d",
          prompt: "the whole payload",
          toolsets: [],
          profile: undefined,
        },
        new AbortController().signal,
      )
      .catch((error: unknown) => error);
    expect((failure as AgentRunFailure).message).toBe(
      `model endpoint ${model.baseUrl}/messages answered HTTP 400: ${TOO_LONG} — the run's first request fills the model's context (200000 tokens) before any tool ran: render less of the event in the route's prompt (the payload it quotes), shorten agent.system_prompt or the skill, or use a model with a larger context`,
    );
    expect(model.requests).toHaveLength(1);
  });

  it("a cron job's first request names the job's prompt, which has no route or skill", async () => {
    model = await startFakeAnthropic();
    model.script({ status: 400, body: TOO_LONG });
    const failure = await anthropicRunner(model.baseUrl, [dump])
      .run(
        {
          route: "cron:digest",
          event: "schedule",
          deliveryId: "d",
          prompt: "p",
          toolsets: [],
          profile: undefined,
        },
        new AbortController().signal,
      )
      .catch((error: unknown) => error);
    expect((failure as AgentRunFailure).message).toContain(
      "— the run's first request fills the model's context (200000 tokens) before any tool ran: shorten the prompt of cron job digest or agent.system_prompt, or use a model with a larger context",
    );
  });
});
