import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { AgentRunFailure } from "../../../src/actors/agent/runner.js";
import type { McpToolSource } from "../../../src/agent/mcpTools.js";
import { modelRunner } from "../../../src/agent/modelRunner.js";
import type { Sleep } from "../../../src/agent/retry.js";
import { type Logger, silentLogger } from "../../../src/io/log.js";
import { type FakeModel, startFakeOpenAI } from "../../fakes/openaiServer.js";

let model: FakeModel;
beforeAll(async () => {
  model = await startFakeOpenAI();
});
afterAll(() => model.close());

/** The run's `timeout_seconds` as named in its failure; the run's timeout signal is the test's own (below). */
const TIMEOUT_SECONDS = 1;

/**
 * The run's timeout, ended by the test at the moment it means (the retry wait, the hung retried call, the
 * first connect): a real timer raced the fake endpoint, and on a loaded machine ran out before its answer.
 */
let timeout = new AbortController();
const timeUp = () => timeout.abort(new DOMException("timed out", "TimeoutError"));

/** A retry wait that lasts until the run's signal ends it; the run's timeout runs out once it began. */
const waitForever: Sleep = (_ms, signal) =>
  new Promise((_resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
    timeUp();
  });

/** The model runner's settings against the fake endpoint, with the run's retries and timeout. */
const settings = (run: { retries: number; timeout_seconds: number }) => ({
  provider: "openai" as const,
  model: "m",
  base_url: model.baseUrl,
  api_key: "sk-test-KEY123",
  max_steps: 2,
  max_tokens: 10,
  max_concurrent_runs: 1,
  max_tool_result_chars: 100_000,
  ...run,
});

const runnerWith = (sleep: Sleep, mcp?: McpToolSource) => {
  timeout = new AbortController();
  return modelRunner({
    ...(mcp === undefined ? {} : { mcp: () => mcp }),
    settings: settings({ retries: 2, timeout_seconds: TIMEOUT_SECONDS }),
    logger: silentLogger(),
    sleep,
    runTimeout: () => timeout.signal,
  });
};
const request = {
  route: "r",
  event: "e",
  deliveryId: "d",
  prompt: "p",
  toolsets: ["no_mcp"],
  profile: undefined,
};

describe("agent.timeout_seconds passed while a model call waits for its retry", () => {
  it("the failure names the endpoint's answer that made the run wait (a 429 with a long Retry-After), not only the timeout", async () => {
    model.script({
      status: 429,
      headers: { "retry-after": "30" },
      body: '{"error":{"message":"Rate limit reached for sk-test-KEY123","type":"requests"}}',
    });
    const failure = await runnerWith(waitForever)
      .run(request, new AbortController().signal)
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(failure).toBeInstanceOf(AgentRunFailure);
    const message = (failure as AgentRunFailure).message;
    expect(message).toBe(
      `the run took longer than agent.timeout_seconds (${TIMEOUT_SECONDS} s) while it waited 30 s to retry a model call that failed: model endpoint ${model.baseUrl}/chat/completions answered HTTP 429: {"error":{"message":"Rate limit reached for [redacted]","type":"requests"}}`,
    );
    expect((failure as AgentRunFailure).record?.error).toBe(message);
  });

  it("a timeout after the wait, during the retried call, says only that the run took too long", async () => {
    model.script({ status: 503, headers: { "retry-after": "1" } }, { hang: true });
    const requests = model.requests.length;
    const runner = runnerWith(async () => {});
    // The run's time runs out once the retried call reached the endpoint, which never answers it.
    void vi
      .waitFor(() => expect(model.requests.length).toBe(requests + 2), { timeout: 10_000, interval: 10 })
      .then(timeUp, () => undefined);
    const failure = await runner.run(request, new AbortController().signal).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect((failure as AgentRunFailure).message).toBe(
      `the run took longer than agent.timeout_seconds (${TIMEOUT_SECONDS} s)`,
    );
  });
});

describe("agent.timeout_seconds passed while the run waits for an MCP server's first connect", () => {
  it("the failure names the servers still starting, not only the timeout", async () => {
    const requests = model.requests.length;
    // "slow" is making its first connect (no tools registered yet) and never finishes it; "up" is connected.
    const hub: McpToolSource = {
      tools: () => [
        {
          name: "mcp__up__lookup",
          server: "up",
          original: "lookup",
          kind: "native",
          readOnly: true,
          inputSchema: { type: "object" },
        },
      ],
      status: () => [
        { name: "up", state: "connected" },
        { name: "slow", state: "connecting" },
      ],
      // The run's time runs out while it waits for this connect, which never ends.
      settled: () => {
        timeUp();
        return new Promise(() => undefined);
      },
      callRegistered: () => Promise.resolve({ content: [] } as CallToolResult),
    };
    const failure = await runnerWith(async () => {}, hub)
      .run({ ...request, toolsets: ["up", "slow"] }, new AbortController().signal)
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect((failure as AgentRunFailure).message).toBe(
      `the run took longer than agent.timeout_seconds (${TIMEOUT_SECONDS} s) while it waited for the first connect of MCP server "slow", whose tools it is offered`,
    );
    // The model was never asked.
    expect(model.requests.length).toBe(requests);
  });
});

describe("an MCP server still making its first connect when the run's wait for it ends", () => {
  it("the run goes on without its tools and says so in a WARN naming the server", async () => {
    const warned: string[] = [];
    const logger = pino({ level: "warn" }, { write: (line: string) => warned.push(JSON.parse(line).msg) });
    const hub: McpToolSource = {
      tools: () => [],
      status: () => [{ name: "slow", state: "connecting" }],
      settled: () => new Promise(() => undefined),
      callRegistered: () => Promise.resolve({ content: [] } as CallToolResult),
    };
    model.script({ text: "done without tools" });
    const runner = modelRunner({
      mcp: () => hub,
      firstConnectWaitMs: 1,
      settings: settings({ retries: 0, timeout_seconds: 60 }),
      logger: logger as unknown as Logger,
    });
    const result = await runner.run({ ...request, toolsets: ["slow"] }, new AbortController().signal);
    expect(result.text).toBe("done without tools");
    // The time said is the time waited, rounded to the millisecond: a loaded machine fires the 1 ms timer
    // late, and the clock it is read on may say it fired within half a millisecond (0 s).
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatch(
      /^\[agent\] r: mcp_servers\.slow still connecting after (?:0|0\.\d{1,3}) s — the run goes on without its tools$/,
    );
  });
});
