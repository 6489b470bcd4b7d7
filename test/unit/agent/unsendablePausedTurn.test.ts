import { afterEach, describe, expect, it } from "vitest";
import { AgentRunFailure } from "../../../src/actors/agent/runner.js";
import { type RunRecord, runLogLine } from "../../../src/agent/runRecord.js";
import { type FakeModel, startFakeAnthropic } from "../../fakes/anthropicServer.js";
import { anthropicRunner } from "../../helpers/anthropicRunner.js";

/**
 * A turn the Messages API paused (`stop_reason: pause_turn`) with content svc cannot send back for it to go on
 * (none at all, or a `server_tool_use` of the endpoint's own tools): not continued, the continuations sent
 * said as they were, and with no text the run fails rather than delivering an empty reply (docs/agent.md).
 * Real sockets on 127.0.0.1.
 */

const search = { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "x" } };

let model: FakeModel | undefined;
afterEach(async () => {
  await model?.close();
});

function run(baseUrl: string) {
  return anthropicRunner(baseUrl, []).run(
    { route: "r", event: "e", deliveryId: "d", prompt: "what happened", toolsets: [], profile: undefined },
    new AbortController().signal,
  );
}

describe("a paused turn svc cannot continue", () => {
  it("with no content: one request, and the run fails saying why", async () => {
    model = await startFakeAnthropic();
    model.script({ finishReason: "pause_turn" }, { text: "never asked for" });
    const failure = await run(model.baseUrl).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(AgentRunFailure);
    expect((failure as AgentRunFailure).message).toBe(
      "the Messages API paused the turn (stop_reason pause_turn) with no content to send back for it to go on, before the model wrote any text — the run has no reply to deliver",
    );
    expect((failure as AgentRunFailure).record).toMatchObject({ outcome: "error", steps: 1 });
    expect(model.requests).toHaveLength(1);
  });

  it("holding only a server_tool_use: one request, and the run fails naming the block", async () => {
    model = await startFakeAnthropic();
    model.script({ blocks: [search], finishReason: "pause_turn" }, { text: "never asked for" });
    const failure = await run(model.baseUrl).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(AgentRunFailure);
    expect((failure as AgentRunFailure).message).toBe(
      "the Messages API paused the turn (stop_reason pause_turn) with content svc cannot send back for it to go on (server_tool_use), before the model wrote any text — the run has no reply to deliver",
    );
    expect(model.requests).toHaveLength(1);
  });

  it("with text beside it: the text is delivered cut short, its record and line counting no continuation", async () => {
    model = await startFakeAnthropic();
    model.script({ text: "Searching for it.", blocks: [search], finishReason: "pause_turn" });
    const reply = await run(model.baseUrl);
    expect(model.requests).toHaveLength(1);
    expect(reply.text).toBe("Searching for it.");
    expect(reply.record).toMatchObject({
      outcome: "ok",
      cut: "pause_turn",
      paused: { continuations: 0, unsent: ["server_tool_use"] },
    });
    expect(runLogLine("r", "d", reply.record as RunRecord)).toContain(
      "ok (reply cut short: the Messages API paused the turn with content svc cannot send back (server_tool_use) before any continuation)",
    );
  });

  it("after a continuation it could send: the one continuation is counted", async () => {
    model = await startFakeAnthropic();
    model.script(
      { text: "The deploy failed because ", finishReason: "pause_turn" },
      { blocks: [search], finishReason: "pause_turn" },
      { text: "never asked for" },
    );
    const reply = await run(model.baseUrl);
    expect(model.requests).toHaveLength(2);
    expect(reply.text).toBe("The deploy failed because ");
    expect(reply.record).toMatchObject({ cut: "pause_turn", paused: { continuations: 1 } });
    expect(runLogLine("r", "d", reply.record as RunRecord)).toContain(
      "(reply cut short: the Messages API paused the turn with content svc cannot send back (server_tool_use) after 1 continuation)",
    );
  });
});
