import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { callTool, type FakeModel, startFakeOpenAI } from "../../fakes/openaiServer.js";
import { type RecordingMcp, startRecordingMcp } from "../../fixtures/mcp/recordingServer.js";
import { startTestGateway, stopPastDrain, webhookConfig } from "../../helpers/gateway.js";
import { postSignedIssue } from "../../helpers/http.js";

/**
 * docs/agent.md, What a run records: a sampling request's model run that the gateway's stop ends (the stop
 * closes the server's connection while the model has not answered) says so, `aborted (the gateway stopped
 * during the run)`, as every run a stop ends does — not that its server canceled the request.
 */
const SECRET = "hook-secret-for-sampling-stop";

let model: FakeModel;
let notes: RecordingMcp;

beforeAll(async () => {
  [model, notes] = await Promise.all([startFakeOpenAI(), startRecordingMcp("notes: ")]);
});
afterAll(async () => {
  await Promise.all([model?.close(), notes?.close()]);
});

describe("a sampling request under way when the gateway stops", () => {
  it("its sampling run's line says the gateway stopped", async () => {
    const gw = await startTestGateway({
      fakeSleeps: true,
      drainTimeoutMs: 1000,
      config: webhookConfig(
        { triage: { prompt: "triage", toolsets: ["notes"], deliver: "log" } },
        { secret: SECRET },
        {
          agent: {
            provider: "openai",
            model: "test-model",
            base_url: model.baseUrl,
            api_key: "sk-stop-0123456789",
          },
          mcp_servers: { notes: { url: notes.url, sampling: { enabled: true, timeout: 600 } } },
        },
      ),
    });
    try {
      // The run asks the server's tool, which asks svc to sample; that model call never answers.
      model.script(callTool("mcp__notes__ask_model", { prompt: "summarize" }), { hang: true });
      const before = model.requests.length;
      expect((await postSignedIssue(gw.url("/webhooks/triage"), SECRET, {}, "sample-stop-1")).status).toBe(
        202,
      );
      await vi.waitFor(() => expect(model.requests.length).toBe(before + 2), {
        timeout: 10_000,
        interval: 10,
      });
      await stopPastDrain(gw);
      const sampling = gw.logs().filter((l) => l.msg.startsWith("[agent] mcp:notes "));
      expect(sampling).toHaveLength(1);
      expect(sampling[0]?.msg).toMatch(
        /^\[agent\] mcp:notes \S+: aborted \(the gateway stopped during the run\) — openai\/test-model, /,
      );
    } finally {
      await gw.stop();
    }
  });
});
