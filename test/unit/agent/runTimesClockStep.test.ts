import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { modelRunner } from "../../../src/agent/modelRunner.js";
import type { AgentTool } from "../../../src/agent/tools/tool.js";
import { silentLogger } from "../../../src/io/log.js";
import { callTool, type FakeModel, startFakeOpenAI } from "../../fakes/openaiServer.js";
import { fakeClock } from "../../helpers/gateway.js";

let model: FakeModel;
beforeAll(async () => {
  model = await startFakeOpenAI();
});
afterAll(() => model.close());
afterEach(() => {
  vi.useRealTimers();
});

const settings = {
  provider: "openai" as const,
  model: "m",
  base_url: "",
  api_key: "k",
  max_steps: 3,
  max_tokens: 10,
  retries: 0,
  timeout_seconds: 30,
  max_concurrent_runs: 1,
  max_tool_result_chars: 100_000,
};

const request = {
  route: "r",
  event: "e",
  deliveryId: "d",
  prompt: "p",
  toolsets: ["no_mcp"],
  profile: undefined,
};

/** A tool during whose call `step` steps the system clock. */
function steppingTool(step: () => void): AgentTool {
  return {
    name: "slow",
    description: "Takes a while",
    inputSchema: { type: "object", properties: {} },
    async execute() {
      step();
      return { ok: true, content: [{ type: "text", text: "done" }] };
    },
  };
}

/**
 * A run's `ms` and each tool call's `ms` (run records, the run's log line, `svc_run_duration_seconds`)
 * are durations: a step of the system clock (NTP, a VM resumed) during the run is not counted in them.
 */
describe("run and tool call times across a step of the system clock", () => {
  it("the gateway's clock: only the time that passed is counted, not the step", async () => {
    const clock = fakeClock();
    model.script(callTool("slow", {}), { text: "ok" });
    const runner = modelRunner({
      settings: { ...settings, base_url: model.baseUrl },
      logger: silentLogger(),
      elapsed: clock.elapsed,
      builtins: () => [
        steppingTool(() => {
          clock.step(3_600_000);
          clock.advance(250);
        }),
      ],
    });
    const result = await runner.run(request, new AbortController().signal);
    expect(result.record?.toolCalls).toEqual([{ name: "slow", ms: 250, ok: true }]);
    expect(result.record?.ms).toBe(250);
  });

  it("whole milliseconds, as before the clock change: performance.now's fractions never reach the log line (233.16474399999993ms)", async () => {
    const clock = fakeClock();
    model.script(callTool("slow", {}), { text: "ok" });
    const runner = modelRunner({
      settings: { ...settings, base_url: model.baseUrl },
      logger: silentLogger(),
      elapsed: clock.elapsed,
      builtins: () => [steppingTool(() => clock.advance(250.6))],
    });
    const result = await runner.run(request, new AbortController().signal);
    expect(result.record?.toolCalls).toEqual([{ name: "slow", ms: 251, ok: true }]);
    expect(result.record?.ms).toBe(251);
  });

  it("by default on performance.now: a step of Date.now is not counted", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    model.script(callTool("slow", {}), { text: "ok" });
    const runner = modelRunner({
      settings: { ...settings, base_url: model.baseUrl },
      logger: silentLogger(),
      builtins: () => [steppingTool(() => vi.setSystemTime(Date.now() + 3_600_000))],
    });
    const result = await runner.run(request, new AbortController().signal);
    expect(result.record?.toolCalls[0]?.ms).toBeLessThan(3_600_000);
    expect(result.record?.ms).toBeLessThan(3_600_000);
  });
});
