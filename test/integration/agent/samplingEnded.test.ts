import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { callTool, type FakeModel, startFakeOpenAI } from "../../fakes/openaiServer.js";
import { type RecordingMcp, startRecordingMcp } from "../../fixtures/mcp/recordingServer.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postSignedIssue } from "../../helpers/http.js";

/**
 * A sampling request's model run that ends before its answer (docs/agent.md, What a run records): its
 * `[agent]` line says why — the request's `sampling.timeout` — and not that the gateway stopped, which it
 * did not. The run that called the tool goes on with the tool's error.
 */

const SECRET = "hook-secret-for-sampling-ends";
const KEY = "sk-sampling-ends-key-0123456789";

let model: FakeModel;
let notes: RecordingMcp;
let gw: TestGateway;

beforeAll(async () => {
  [model, notes] = await Promise.all([startFakeOpenAI(), startRecordingMcp("notes: ")]);
  gw = await startTestGateway({
    config: webhookConfig(
      { triage: { prompt: "triage", toolsets: ["notes"], deliver: "log" } },
      { secret: SECRET },
      {
        agent: { provider: "openai", model: "test-model", base_url: model.baseUrl, api_key: KEY },
        mcp_servers: { notes: { url: notes.url, sampling: { enabled: true, timeout: 0.3 } } },
      },
    ),
  });
});

afterAll(async () => {
  await gw?.stop();
  await Promise.all([model?.close(), notes?.close()]);
});

describe("a sampling request whose model run does not finish", () => {
  it("past sampling.timeout: the sampling run's line names the timeout, not a stop of the gateway", async () => {
    // The run asks the server's tool, which asks svc to sample; that model call never answers.
    model.script(
      callTool("mcp__notes__ask_model", { prompt: "summarize" }),
      { hang: true },
      { text: "done" },
    );
    expect((await postSignedIssue(gw.url("/webhooks/triage"), SECRET, {}, "sample-end-1")).status).toBe(202);
    const lines = await vi.waitFor(
      () => {
        const found = gw.logs().filter((l) => l.msg.startsWith("[agent] "));
        if (!found.some((l) => l.msg.startsWith("[agent] triage sample-end-1:"))) throw new Error("not yet");
        return found.map((l) => l.msg);
      },
      { timeout: 10_000, interval: 20 },
    );
    const sampling = lines.filter((l) => l.startsWith("[agent] mcp:notes "));
    expect(sampling).toHaveLength(1);
    expect(sampling[0]).toMatch(
      /^\[agent\] mcp:notes \S+: aborted \(sampling timed out after 0\.3 s: mcp_servers\.notes\.sampling\.timeout\) — openai\/test-model, /,
    );
    expect(lines.join("\n")).not.toContain("the gateway stopped");
    // The run that asked goes on with the tool's error.
    expect(lines.find((l) => l.startsWith("[agent] triage sample-end-1:"))).toMatch(
      /: ok — .*mcp__notes__ask_model error/,
    );
  });
});

describe("a sampling request whose model run fails", () => {
  it("the server is told only that the model run failed; the endpoint's address and answer stay in svc's log, at WARN without the key", async () => {
    const detail = "upstream 10.20.30.40:8443 refused: internal-cluster-name";
    const before = model.requests.length;
    model.script(
      callTool("mcp__notes__ask_model", { prompt: "summarize" }),
      {
        status: 400,
        body: JSON.stringify({ error: { message: `${detail} (key ${KEY})`, type: "invalid_request_error" } }),
      },
      { text: "done" },
    );
    expect((await postSignedIssue(gw.url("/webhooks/triage"), SECRET, {}, "sample-fail-1")).status).toBe(202);
    await vi.waitFor(() => expect(model.requests.length).toBe(before + 3), {
      timeout: 10_000,
      interval: 20,
    });
    // The tool's result is what the server made of the error svc answered its sampling request with.
    const messages = model.requests.at(-1)?.json.messages as { role: string; content: unknown }[];
    const told = JSON.stringify(messages.filter((m) => m.role === "tool"));
    expect(told).toContain("sampling failed: the model run failed (the gateway's log says why)");
    expect(told).not.toContain(detail);
    expect(told).not.toContain(model.baseUrl);
    const logged = await vi.waitFor(
      () => {
        const line = gw
          .logs()
          .find((l) => l.msg.startsWith("[agent] mcp:notes ") && l.msg.includes("10.20.30.40"));
        if (line === undefined) throw new Error("not yet");
        return line.msg;
      },
      { timeout: 10_000, interval: 20 },
    );
    expect(logged).toContain(detail);
    // At WARN too: the `[agent]` line is INFO, which a gateway at SVC_LOG_LEVEL=warn does not write.
    const warned = gw.logs().filter((l) => l.msg.startsWith("[mcp] notes: sampling failed: "));
    expect(warned).toHaveLength(1);
    expect(warned[0]?.level).toBe(40);
    expect(warned[0]?.msg).toContain(`model endpoint ${model.baseUrl}/chat/completions`);
    expect(warned[0]?.msg).toContain(detail);
    expect(JSON.stringify(gw.logs())).not.toContain(KEY);
  });
});
