import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { AgentRunFailure } from "../../../src/actors/agent/runner.js";
import { startFakeAnthropic } from "../../fakes/anthropicServer.js";
import { callTool, type FakeModel, startFakeOpenAI } from "../../fakes/openaiServer.js";
import { type RecordingMcp, startRecordingMcp } from "../../fixtures/mcp/recordingServer.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postSignedIssue } from "../../helpers/http.js";
import { testModelRunner } from "../../helpers/testModelRunner.js";

/**
 * A sampling request whose answer the endpoint's content filter stopped, or the model refused (docs/agent.md,
 * Sampling): the WARN saying why names what a sampling run has — the server's sampling request as the prompt,
 * `sampling.model` when the entry sets one — not a route's prompt and agent.model.
 */

const SECRET = "hook-secret-for-sampling-refused";

let model: FakeModel;
let notes: RecordingMcp;
let plain: RecordingMcp;
let gw: TestGateway;

beforeAll(async () => {
  [model, notes, plain] = await Promise.all([
    startFakeOpenAI(),
    startRecordingMcp("notes: "),
    startRecordingMcp("plain: "),
  ]);
  gw = await startTestGateway({
    config: webhookConfig(
      { triage: { prompt: "triage", toolsets: ["notes", "plain"], deliver: "log" } },
      { secret: SECRET },
      {
        agent: { provider: "openai", model: "test-model", base_url: model.baseUrl, retries: 0 },
        mcp_servers: {
          notes: { url: notes.url, sampling: { enabled: true, model: "samp-model" } },
          plain: { url: plain.url, sampling: { enabled: true } },
        },
      },
    ),
  });
});

afterAll(async () => {
  await gw?.stop();
  await Promise.all([model?.close(), notes?.close(), plain?.close()]);
});

/** The WARN of `server`'s failed sampling request, once the run that asked for it has ended. */
async function samplingWarning(server: string, deliveryId: string): Promise<string> {
  expect((await postSignedIssue(gw.url("/webhooks/triage"), SECRET, {}, deliveryId)).status).toBe(202);
  return vi.waitFor(
    () => {
      if (!gw.logs().some((l) => l.msg.startsWith(`[agent] triage ${deliveryId}:`)))
        throw new Error("not yet");
      const warned = gw.logs().filter((l) => l.msg.startsWith(`[mcp] ${server}: sampling failed: `));
      expect(warned).toHaveLength(1);
      return warned[0]?.msg ?? "";
    },
    { timeout: 10_000, interval: 20 },
  );
}

describe("a sampling request the endpoint's content filter stopped", () => {
  it("with sampling.model: names the server's sampling request and sampling.model", async () => {
    model.script(
      callTool("mcp__notes__ask_model", { prompt: "summarize" }),
      { text: "Here is how", finishReason: "content_filter" },
      { text: "done" },
    );
    expect(await samplingWarning("notes", "refused-1")).toBe(
      `[mcp] notes: sampling failed: the endpoint's content filter stopped the model's answer (finish_reason content_filter) — there is no answer to give the server: change what mcp_servers.notes's sampling request or agent.system_prompt asks for, or use another sampling.model than "samp-model"; on Azure OpenAI, the deployment's content filter decides`,
    );
    // The model call was the sampling model's.
    expect(model.requests.at(-2)?.json.model).toBe("samp-model");
  });

  it("without sampling.model: names agent.model, which answered", async () => {
    model.script(
      callTool("mcp__plain__ask_model", { prompt: "summarize" }),
      { finishReason: "content_filter" },
      { text: "done" },
    );
    expect(await samplingWarning("plain", "refused-2")).toBe(
      `[mcp] plain: sampling failed: the endpoint's content filter stopped the model's answer (finish_reason content_filter) — there is no answer to give the server: change what mcp_servers.plain's sampling request or agent.system_prompt asks for, or use another agent.model than "test-model"; on Azure OpenAI, the deployment's content filter decides`,
    );
  });
});

describe("a sampling request the model refused (Messages API)", () => {
  it("fails naming the server's sampling request and sampling.model", async () => {
    const anthropic = await startFakeAnthropic();
    try {
      anthropic.script({ text: "I can't", finishReason: "refusal" });
      const runner = testModelRunner(
        { provider: "anthropic", model: "claude-sonnet-4-5", base_url: anthropic.baseUrl },
        [],
      );
      // As the gateway's sampler asks (actors/mcp/gatewayHub.ts): route mcp:<server>, the server's limit.
      const failed = await runner
        .run(
          {
            route: "mcp:notes",
            event: "sampling",
            deliveryId: "s-1",
            prompt: "user: summarize",
            toolsets: ["no_mcp"],
            profile: undefined,
            maxTokens: 50,
            model: "samp-model",
          },
          new AbortController().signal,
        )
        .catch((err: unknown) => err);
      expect(failed).toBeInstanceOf(AgentRunFailure);
      expect((failed as AgentRunFailure).message).toBe(
        `the model refused to answer (stop_reason refusal) — there is no answer to give the server: change what mcp_servers.notes's sampling request or agent.system_prompt asks for, or use another sampling.model than "samp-model"`,
      );
    } finally {
      await anthropic.close();
    }
  });
});

describe("a sampling request the endpoint's content filter refused before the model answered (Azure OpenAI's 400)", () => {
  it("names the server's sampling request, not the route's prompt and the event's payload", async () => {
    model.script({
      status: 400,
      body: JSON.stringify({
        error: {
          message:
            "The response was filtered due to the prompt triggering Azure OpenAI's content management policy.",
          type: null,
          param: "prompt",
          code: "content_filter",
          status: 400,
        },
      }),
    });
    const runner = testModelRunner({ provider: "openai", model: "test-model", base_url: model.baseUrl }, []);
    const failed = await runner
      .run(
        {
          route: "mcp:notes",
          event: "sampling",
          deliveryId: "s-2",
          prompt: "user: summarize",
          toolsets: ["no_mcp"],
          profile: undefined,
          maxTokens: 50,
        },
        new AbortController().signal,
      )
      .catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(AgentRunFailure);
    expect((failed as AgentRunFailure).message).toMatch(
      / answered HTTP 400: .* — the endpoint's content filter refused the prompt: change what mcp_servers\.notes's sampling request or agent\.system_prompt asks for; on Azure OpenAI, the deployment's content filter decides$/,
    );
  });
});
