import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import type { FakeApi } from "../../fakes/httpFake.js";
import { callTool, type FakeModel, startFakeOpenAI } from "../../fakes/openaiServer.js";
import { startFakeTelegram } from "../../fakes/telegram.js";
import { type RecordingMcp, startRecordingMcp } from "../../fixtures/mcp/recordingServer.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postSignedIssue } from "../../helpers/http.js";
import { journalLines } from "../../helpers/runJournal.js";
import { telegramMessages } from "../../helpers/telegramMessages.js";

/**
 * `agent.provider: openai` end to end (docs/agent.md): a signed webhook starts a run, the scripted model
 * asks for MCP tools on real MCP servers, the results go back to the model, and the final text reaches a
 * fake Telegram chat. Everything runs over real sockets on 127.0.0.1.
 */

const SECRET = "hook-secret-for-agent-tests";
const API_KEY = "sk-agent-test-key-0123456789";

let model: FakeModel;
let telegram: FakeApi;
let notes: RecordingMcp;
let other: RecordingMcp;
let gw: TestGateway;

const JOBS = {
  revision: 1,
  jobs: {
    j1: {
      id: "j1",
      name: "digest",
      schedule: "every 1d",
      prompt: "daily digest",
      deliver: "telegram",
      deliver_extra: { chat_id: "-7" },
      state: "enabled",
      next_run: "2099-01-01T00:00:00.000Z",
      created_at: "2026-11-22T00:00:00.000Z",
    },
  },
};

function signedPost(route: string, body: unknown, id: string) {
  return postSignedIssue(gw.url(`/webhooks/${route}`), SECRET, body, id);
}

const chatMessages = (count: number) => telegramMessages(telegram, count);

type ChatRequest = {
  messages: Array<{ role: string; content: unknown; tool_calls?: unknown }>;
  tools?: Array<{ type: string; function: { name: string; description?: string; parameters: unknown } }>;
  model: string;
  max_tokens?: number;
};
const chat = (i: number) => model.requests[i]?.json as unknown as ChatRequest;
const offered = (i: number) => (chat(i).tools ?? []).map((t) => t.function.name).sort();
const toolMessages = (i: number) =>
  chat(i)
    .messages.filter((m) => m.role === "tool")
    .map((m) => String(m.content));

function journal(): Array<Record<string, unknown> & { delivery_id: string; run?: Record<string, unknown> }> {
  return journalLines<Record<string, unknown> & { delivery_id: string; run?: Record<string, unknown> }>(
    gw.home.dir,
  );
}

async function journalled(deliveryId: string) {
  return vi.waitFor(
    () => {
      const line = journal().find((l) => l.delivery_id === deliveryId);
      if (line === undefined) throw new Error("not journalled yet");
      return line;
    },
    { timeout: 5000, interval: 20 },
  );
}

beforeAll(async () => {
  [model, telegram, notes, other] = await Promise.all([
    startFakeOpenAI(),
    startFakeTelegram(),
    startRecordingMcp("notes: "),
    startRecordingMcp("other: "),
  ]);
  const chatTarget = { deliver: "telegram", deliver_extra: { chat_id: "-100" } };
  gw = await startTestGateway({
    files: {
      "cron/jobs.json": JSON.stringify(JOBS),
      // Each profile's own secret scope: the header below renders from the run's profile.
      ".env": "NOTES_TOKEN=default-token\n",
      "profiles/work/.env": "NOTES_TOKEN=work-token\n",
    },
    env: { MODEL_KEY: API_KEY },
    config: webhookConfig(
      {
        triage: { prompt: "Issue: {issue.title}", ...chatTarget },
        only_other: { prompt: "only other", toolsets: ["other"], ...chatTarget },
        no_tools: { prompt: "no tools", toolsets: ["no_mcp"], ...chatTarget },
        work_triage: { prompt: "work: {issue.title}", toolsets: ["notes"], profile: "work", ...chatTarget },
        digest: { cron_job: "digest" },
      },
      { secret: SECRET, rate_limit: 1000 },
      {
        agent: {
          provider: "openai",
          model: "test-model",
          base_url: model.baseUrl,
          api_key: `$\{MODEL_KEY}`,
          max_steps: 3,
          max_tokens: 500,
          retries: 2,
          system_prompt: "You are the svc test agent.",
        },
        mcp_servers: {
          notes: {
            url: notes.url,
            headers: { Authorization: "Bearer ${NOTES_TOKEN}" },
            trust: "untrusted",
            sampling: { enabled: true, model: "sampler-model", max_tokens: 64 },
          },
          other: { url: other.url, sampling: { enabled: true } },
        },
        platforms: { telegram: { enabled: true, token: "1:tg", base_url: telegram.url } },
      },
    ),
  });
});

afterAll(async () => {
  await gw?.stop();
  await Promise.all([model?.close(), telegram?.close(), notes?.close(), other?.close()]);
});

beforeEach(() => {
  model.requests.length = 0;
  telegram.requests.length = 0;
  notes.calls.length = 0;
  notes.callAuthorizations.length = 0;
  other.calls.length = 0;
});

describe("a webhook run with provider openai", () => {
  it("the model calls an MCP tool, gets its result, and its final text is delivered; the run is journalled and logged", async () => {
    model.script(callTool("mcp__notes__lookup", { key: "release" }), { text: "The release is ready." });
    const res = await signedPost("triage", { issue: { title: "Ship it" } }, "run-1");
    expect(res.status).toBe(202);
    expect(await chatMessages(1)).toEqual(["The release is ready."]);

    // What the model was sent: system text, the prompt, every enabled server's tools with their schemas.
    const first = chat(0);
    expect(model.requests[0]?.path).toBe("/v1/chat/completions");
    expect(model.requests[0]?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(first.model).toBe("test-model");
    expect(first.max_tokens).toBe(500);
    expect(first.messages[0]).toEqual({ role: "system", content: "You are the svc test agent." });
    expect(first.messages[1]).toEqual({ role: "user", content: "Issue: Ship it" });
    // The default svc-webhook built-ins (web_search needs a backend), then every enabled server's tools.
    expect(offered(0)).toEqual([
      "clarify",
      "mcp__notes__ask_model",
      "mcp__notes__delete_item",
      "mcp__notes__lookup",
      "mcp__other__ask_model",
      "mcp__other__delete_item",
      "mcp__other__lookup",
      "vision_analyze",
      "web_extract",
    ]);
    const lookup = first.tools?.find((t) => t.function.name === "mcp__notes__lookup");
    expect(lookup?.function.description).toBe("Look a key up");
    expect(lookup?.function.parameters).toMatchObject({
      type: "object",
      properties: { key: { type: "string", description: "the key" } },
      required: ["key"],
    });
    // The call reached the MCP server, and its answer went back to the model.
    expect(notes.calls).toEqual([{ tool: "lookup", args: { key: "release" } }]);
    expect(toolMessages(1)).toEqual(["notes: value of release"]);

    const line = await journalled("run-1");
    expect(line.run).toMatchObject({
      provider: "openai",
      model: "test-model",
      steps: 2,
      outcome: "ok",
      usage: { input: 20, output: 10 },
      toolCalls: [{ name: "mcp__notes__lookup", ok: true }],
    });
    const logged = gw.logs().filter((l) => l.msg.startsWith("[agent] triage run-1:"));
    expect(logged).toHaveLength(1);
    expect(logged[0]?.level).toBe(30);
    expect(logged[0]?.msg).toMatch(
      /ok — openai\/test-model, 2 steps, 1 tool call \(mcp__notes__lookup ok \d+ms\), tokens in 20 out 10/,
    );
    // The key is in no log line and no journal line.
    expect(readFileSync(join(gw.home.dir, "logs", "gateway.log"), "utf8")).not.toContain(API_KEY);
    expect(JSON.stringify(journal())).not.toContain(API_KEY);
  });

  it("a run of a route bound to a profile calls the servers through that profile's own connection and secrets", async () => {
    model.script(callTool("mcp__notes__lookup", { key: "a" }), { text: "default done" });
    await signedPost("triage", {}, "profile-1");
    await chatMessages(1);
    model.script(callTool("mcp__notes__lookup", { key: "b" }), { text: "work done" });
    await signedPost("work_triage", { issue: { title: "T" } }, "profile-2");
    expect(await chatMessages(2)).toEqual(["default done", "work done"]);
    expect(notes.calls).toEqual([
      { tool: "lookup", args: { key: "a" } },
      { tool: "lookup", args: { key: "b" } },
    ]);
    expect(notes.callAuthorizations).toEqual(["Bearer default-token", "Bearer work-token"]);
    // The work profile's hub publishes its own status, under the profile's root.
    const status = JSON.parse(
      readFileSync(join(gw.home.dir, "profiles", "work", "mcp-cache", "status.json"), "utf8"),
    ) as { servers: Array<{ name: string; state: string }> };
    expect(status.servers.find((s) => s.name === "notes")?.state).toBe("connected");
    // Both profiles connect "notes": the work profile's log lines name it, the default's name none.
    const connected = gw.logs().filter((l) => l.msg === "[mcp] notes: connected");
    expect(new Set(connected.map((l) => l.profile))).toEqual(new Set([undefined, "work"]));
  });

  it("a route's toolsets naming an MCP server offer only that server's tools; no_mcp offers none", async () => {
    model.script({ text: "only other done" }, { text: "no tools done" });
    await signedPost("only_other", {}, "sel-1");
    await chatMessages(1);
    expect(offered(0)).toEqual(["mcp__other__ask_model", "mcp__other__delete_item", "mcp__other__lookup"]);
    await signedPost("no_tools", {}, "sel-2");
    expect(await chatMessages(2)).toEqual(["only other done", "no tools done"]);
    expect(chat(1).tools).toBeUndefined();
  });

  it("a call that needs approval (untrusted server, no read-only hint) is refused, never reaches the server, and the run goes on", async () => {
    model.script(callTool("mcp__notes__delete_item", { id: "42" }), { text: "Could not delete." });
    await signedPost("triage", { issue: { title: "delete" } }, "refuse-1");
    expect(await chatMessages(1)).toEqual(["Could not delete."]);
    expect(notes.calls).toEqual([]);
    const [refusal] = toolMessages(1);
    expect(refusal).toMatch(
      /refused: .*needs approval \(trust: untrusted\).*denied.*No one is present to approve/,
    );
    expect((await journalled("refuse-1")).run).toMatchObject({
      toolCalls: [{ name: "mcp__notes__delete_item", ok: false, error: expect.stringMatching(/^refused/) }],
    });
  });

  it("a tool the model invents, arguments that are not JSON and arguments the tool's schema refuses come back to the model as tool errors", async () => {
    model.script(
      {
        toolCalls: [
          { name: "mcp__nowhere__tool", args: {} },
          { name: "mcp__other__lookup", args: "{broken" },
          { name: "mcp__other__lookup", args: { key: 5 } },
          { name: "mcp__other__lookup", args: '["release"]' },
        ],
      },
      { text: "recovered" },
    );
    await signedPost("triage", { issue: { title: "x" } }, "invalid-1");
    expect(await chatMessages(1)).toEqual(["recovered"]);
    expect(other.calls).toEqual([]);
    const errors = toolMessages(1).join("\n");
    expect(errors).toMatch(/mcp__nowhere__tool/);
    expect(errors).toMatch(/JSON|parse|Invalid/i);
    expect(errors).toMatch(/key/);
    // JSON that is not an object is refused before the call, not sent to the server as {}.
    expect(toolMessages(1).at(-1)).toBe("arguments must be a JSON object; the tool was not run");
    const { run } = await journalled("invalid-1");
    expect(((run?.toolCalls ?? []) as Array<{ ok: boolean }>).map((c) => c.ok)).toEqual([
      false,
      false,
      false,
      false,
    ]);
  });

  it("max_steps bounds the loop: a model that keeps calling tools gets at most 3 turns", async () => {
    model.script(
      callTool("mcp__other__lookup", { key: "a" }),
      callTool("mcp__other__lookup", { key: "b" }),
      callTool("mcp__other__lookup", { key: "c" }),
      callTool("mcp__other__lookup", { key: "d" }),
    );
    await signedPost("triage", { issue: { title: "loop" } }, "steps-1");
    const [text] = await chatMessages(1);
    expect(text).toMatch(/stopped after 3 model turns/);
    expect(model.requests).toHaveLength(3);
    // The call asked for on the last allowed turn is not run: its result could reach no one.
    expect(other.calls.map((c) => c.args)).toEqual([{ key: "a" }, { key: "b" }]);
    const { run } = await journalled("steps-1");
    expect(run).toMatchObject({ outcome: "max_steps", steps: 3 });
    expect(((run?.toolCalls ?? []) as Array<{ ok: boolean; error?: string }>).at(-1)).toMatchObject({
      ok: false,
      error: "not run: the model asked for it on its last allowed turn (agent.max_steps)",
    });
    // The run's line says the last call was not run, not that it failed.
    const line = gw.logs().find((l) => l.msg.startsWith("[agent] triage steps-1:"))?.msg ?? "";
    expect(line).toMatch(
      /^\[agent\] triage steps-1: max_steps — .*\(mcp__other__lookup ok \d+ms, mcp__other__lookup ok \d+ms, mcp__other__lookup not run 0ms\)/,
    );
    // The unused turn stays in the script for no one: drop it.
    model.requests.length = 0;
    await signedPost("no_tools", {}, "steps-drain");
    await chatMessages(2);
  });

  it("a turn that calls tools but says finish_reason stop still counts as wanting tools: max_steps and its notice", async () => {
    const stopping = (key: string) => ({ ...callTool("mcp__other__lookup", { key }), finishReason: "stop" });
    model.script(stopping("a"), stopping("b"), stopping("c"), stopping("d"));
    await signedPost("triage", { issue: { title: "loop" } }, "steps-stop-1");
    const [text] = await chatMessages(1);
    expect(text).toMatch(/stopped after 3 model turns/);
    expect(other.calls).toHaveLength(2);
    expect((await journalled("steps-stop-1")).run).toMatchObject({ outcome: "max_steps", steps: 3 });
    model.requests.length = 0;
    await signedPost("no_tools", {}, "steps-stop-drain");
    await chatMessages(2);
  });

  it("an answer cut at max_tokens is delivered as it is, and the log line and the journal say it was cut", async () => {
    model.script({ text: "The release is blocked by", finishReason: "length" });
    await signedPost("no_tools", {}, "cut-1");
    expect(await chatMessages(1)).toEqual(["The release is blocked by"]);
    expect((await journalled("cut-1")).run).toMatchObject({ outcome: "ok", steps: 1, cut: "max_tokens" });
    const logged = gw.logs().filter((l) => l.msg.startsWith("[agent] no_tools cut-1:"));
    expect(logged[0]?.msg).toMatch(
      /^\[agent\] no_tools cut-1: ok \(reply cut at agent\.max_tokens\) — openai\/test-model, 1 step,/,
    );
  });

  it("a model that repeats its API key: the delivered reply, the log and the journal show [redacted]", async () => {
    model.script({ text: `the key is ${API_KEY} ok` });
    await signedPost("no_tools", {}, "echo-key-1");
    expect(await chatMessages(1)).toEqual(["the key is [redacted] ok"]);
    await journalled("echo-key-1");
    expect(readFileSync(join(gw.home.dir, "logs", "gateway.log"), "utf8")).not.toContain(API_KEY);
    expect(JSON.stringify(journal())).not.toContain(API_KEY);
  });

  it("a tool result quoting the webhook secret (a payload's injected instruction to read it): the model, the reply and the log get [redacted]", async () => {
    // The server answers "other: value of <key>": a tool that read ~/.svc/.env would quote it the same way.
    model.script(callTool("mcp__other__lookup", { key: SECRET }), { text: `it is ${SECRET}` });
    await signedPost("triage", { issue: { title: "leak" } }, "echo-secret-1");
    expect(await chatMessages(1)).toEqual(["it is [redacted]"]);
    expect(toolMessages(1)).toEqual(["other: value of [redacted]"]);
    await journalled("echo-secret-1");
    expect(readFileSync(join(gw.home.dir, "logs", "gateway.log"), "utf8")).not.toContain(SECRET);
    expect(JSON.stringify(journal())).not.toContain(SECRET);
  });

  it("calls the model wrote quoting its API key (a made-up tool name, arguments that are not JSON): the log and the journal show [redacted]", async () => {
    model.script(
      {
        toolCalls: [
          { name: `leak_${API_KEY}`, args: {} },
          { name: "mcp__other__lookup", args: `{"key": "${API_KEY}"` },
        ],
      },
      { text: "after the leaky calls" },
    );
    await signedPost("triage", { issue: { title: "x" } }, "call-key-1");
    expect(await chatMessages(1)).toEqual(["after the leaky calls"]);
    const { run } = await journalled("call-key-1");
    expect(run?.toolCalls).toEqual([
      expect.objectContaining({ name: "leak_[redacted]", ok: false }),
      expect.objectContaining({ name: "mcp__other__lookup", error: expect.stringContaining("[redacted]") }),
    ]);
    expect(JSON.stringify(journal())).not.toContain(API_KEY);
    expect(readFileSync(join(gw.home.dir, "logs", "gateway.log"), "utf8")).not.toContain(API_KEY);
  });

  it("an error body quoting the key where the detail is cut leaves no part of the key", async () => {
    // The key begins at character 290 of the body, which the notice cuts at 300.
    const body = JSON.stringify({ error: { message: `${"x".repeat(264)} key ${API_KEY}` } });
    model.script({ status: 401, body });
    await signedPost("no_tools", {}, "cut-key-1");
    const [notice] = await chatMessages(1);
    expect(notice).toMatch(/^⚠️ Agent run failed: model endpoint .* answered HTTP 401/);
    // The refusal names the setting to fix.
    expect(notice).toMatch(/ — check agent\.api_key: the endpoint did not take it$/);
    const keyStart = API_KEY.slice(0, 8);
    expect(notice).not.toContain(keyStart);
    expect(JSON.stringify((await journalled("cut-key-1")).run)).not.toContain(keyStart);
    expect(readFileSync(join(gw.home.dir, "logs", "gateway.log"), "utf8")).not.toContain(keyStart);
  });

  it("an error body cut at 300 characters right inside an emoji leaves the emoji out whole (no U+FFFD in the notice)", async () => {
    // The body's 300th UTF-16 unit is the first half of the emoji.
    const body = JSON.stringify({ error: { message: `${"x".repeat(278)}😀 after the cut` } });
    model.script({ status: 400, body });
    await signedPost("no_tools", {}, "cut-emoji-1");
    const [notice] = await chatMessages(1);
    expect(notice).toMatch(/^⚠️ Agent run failed: model endpoint .* answered HTTP 400/);
    expect(notice).toContain(`${"x".repeat(278)}`);
    expect(notice).not.toContain("\ufffd");
  });

  it("429 with Retry-After and a 500 are retried (agent.retries), then the answer is delivered", async () => {
    model.script(
      { status: 429, headers: { "retry-after": "0" } },
      { status: 500, headers: { "retry-after-ms": "0" } },
      { text: "after retries" },
    );
    await signedPost("no_tools", {}, "retry-1");
    expect(await chatMessages(1)).toEqual(["after retries"]);
    expect(model.requests).toHaveLength(3);
    const retries = gw
      .logs()
      .filter((l) => /\[agent\] no_tools: model call failed .* retry \d of 2/.test(l.msg));
    expect(retries.map((l) => l.wait_ms)).toEqual([0, 0]);
  });

  it("a 400 refusing the output limit (vLLM's: more than the model's context leaves) names agent.max_tokens in the notice", async () => {
    const tooLarge = JSON.stringify({
      object: "error",
      message:
        "This model's maximum context length is 512 tokens. However, you requested 530 tokens (30 in the messages, 500 in the completion). Please reduce the length of the messages or completion.",
      type: "BadRequestError",
      param: null,
      code: 400,
    });
    model.script({ status: 400, body: tooLarge });
    await signedPost("no_tools", {}, "too-large-1");
    const [notice] = await chatMessages(1);
    expect(notice).toMatch(
      /^⚠️ Agent run failed: model endpoint .* answered HTTP 400: \{.*500 in the completion/,
    );
    expect(notice).toMatch(
      / — check agent\.max_tokens \(500\): the output tokens each model turn asks for, which the model \(with the prompt, in its context\) may not have room for$/,
    );
    expect(model.requests).toHaveLength(1);
  });

  it("a 400 refusing the model's name (OpenRouter's, LiteLLM's, DeepSeek's) names agent.model in the notice, as a 404 does", async () => {
    const bodies = [
      '{"error":{"message":"test-model is not a valid model ID","code":400},"user_id":"user_1"}',
      '{"error":{"message":"/chat/completions: Invalid model name passed in model=test-model. Call `/v1/models` to view available models for your key.","type":"None","param":"None","code":"400"}}',
      '{"error":{"message":"Model Not Exist","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}',
    ];
    for (const [i, body] of bodies.entries()) {
      model.script({ status: 400, body });
      await signedPost("no_tools", {}, `bad-model-${i}`);
      const notice = (await chatMessages(i + 1)).at(-1);
      expect(notice).toBe(
        `⚠️ Agent run failed: model endpoint ${model.baseUrl}/chat/completions answered HTTP 400: ${body} — check agent.model ("test-model"): the endpoint does not know it by that name`,
      );
    }
  });

  it("a 413 from a proxy in front of the model (nginx's client_max_body_size) names what makes a request large, and is not retried", async () => {
    const page =
      "<html><head><title>413 Request Entity Too Large</title></head><body><center><h1>413 Request Entity Too Large</h1></center><hr><center>nginx</center></body></html>";
    const tooLarge = { status: 413, headers: { "content-type": "text/html" }, body: page };
    const answered = `answered HTTP 413: an HTML page "413 Request Entity Too Large" (${page.length} characters, not shown)`;
    // After a tool ran: its results make the request large.
    model.script(callTool("mcp__notes__lookup", { key: "big" }), tooLarge);
    await signedPost("triage", { issue: { title: "big" } }, "too-big-1");
    const [notice] = await chatMessages(1);
    expect(notice).toBe(
      `⚠️ Agent run failed: model endpoint ${model.baseUrl}/chat/completions ${answered} — the request (the prompt, and the run's tool results so far) is larger than the server, or a proxy in front of it, takes: lower agent.max_tool_result_chars (100000), or raise the server's limit (nginx: client_max_body_size)`,
    );
    expect(model.requests).toHaveLength(2);
    // The run's first request, before any tool ran: the route's prompt is what is large.
    model.script(tooLarge);
    await signedPost("no_tools", {}, "too-big-2");
    expect((await chatMessages(2))[1]).toBe(
      `⚠️ Agent run failed: model endpoint ${model.baseUrl}/chat/completions ${answered} — the run's first request is larger than the server, or a proxy in front of it, takes, before any tool ran: render less of the event in the route's prompt (the payload it quotes), shorten agent.system_prompt or the skill, or raise the server's limit (nginx: client_max_body_size)`,
    );
    expect(model.requests).toHaveLength(3);
  });

  it("OpenAI's 429 for an account out of quota (insufficient_quota) is not retried, and the notice says what to do", async () => {
    const quota = JSON.stringify({
      error: {
        message:
          "You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.",
        type: "insufficient_quota",
        param: null,
        code: "insufficient_quota",
      },
    });
    model.script({ status: 429, body: quota });
    await signedPost("no_tools", {}, "quota-1");
    const [notice] = await chatMessages(1);
    expect(notice).toBe(
      `⚠️ Agent run failed: model endpoint ${model.baseUrl}/chat/completions answered HTTP 429: ${quota} — the account agent.api_key belongs to has no quota left (insufficient_quota, not a rate limit: no retry passes): add credit or raise its spending limit in its plan and billing`,
    );
    expect(model.requests).toHaveLength(1);
    expect(
      gw
        .logs()
        .some((l) => l.delivery_id === "quota-1" && l.msg.startsWith("[agent] no_tools: model call failed")),
    ).toBe(false);
  });

  it("a malformed answer ends the run with a failure notice delivered where the route delivers", async () => {
    model.script({ malformed: true });
    await signedPost("no_tools", {}, "bad-1");
    const [notice] = await chatMessages(1);
    expect(notice).toMatch(/^⚠️ Agent run failed: /);
    expect((await journalled("bad-1")).run).toMatchObject({ outcome: "error" });
    await vi.waitFor(
      () =>
        expect(
          gw
            .logs()
            .some((l) => l.msg === "[webhook] no_tools: agent run failed" && l.delivery_id === "bad-1"),
        ).toBe(true),
      { timeout: 5000, interval: 20 },
    );
  });

  it("a 200 answer the SDK cannot use (no choices) names the endpoint in the failure notice and quotes the answer", async () => {
    model.script({ status: 200, body: JSON.stringify({ id: "x", object: "chat.completion", choices: [] }) });
    await signedPost("no_tools", {}, "no-choices-1");
    const [notice] = await chatMessages(1);
    expect(notice).toBe(
      `⚠️ Agent run failed: model endpoint ${model.baseUrl}/chat/completions gave an answer svc cannot use: Response did not contain any choices: {"id":"x","object":"chat.completion","choices":[]}`,
    );
  });

  /** OpenRouter's 200 answer whose choice failed while the provider wrote it, with the provider's error. */
  const failedChoice = (code: number, message: string) => ({
    status: 200,
    headers: { "retry-after": "0" },
    body: JSON.stringify({
      id: "gen-or-failed",
      object: "chat.completion",
      model: "test-model",
      provider: "Together",
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: "The build fai" },
          finish_reason: "error",
          native_finish_reason: "error",
          error: { code, message },
        },
      ],
    }),
  });

  it("an answer whose choice failed during generation with a provider's 502 (OpenRouter's finish_reason error) is retried, as the same error inside a stream is; past agent.retries the run fails, quoting its error", async () => {
    const upstream = "Upstream error from Together: connection reset";
    model.script(failedChoice(502, upstream), { text: "after the upstream error" });
    await signedPost("no_tools", {}, "choice-error-retried");
    expect(await chatMessages(1)).toEqual(["after the upstream error"]);
    expect(model.requests).toHaveLength(2);

    model.script(failedChoice(502, upstream), failedChoice(502, upstream), failedChoice(502, upstream));
    await signedPost("no_tools", {}, "choice-error-1");
    const [, notice] = await chatMessages(2);
    expect(notice).toBe(
      `⚠️ Agent run failed: model endpoint ${model.baseUrl}/chat/completions gave an answer svc cannot use (HTTP 200): {"finish_reason":"error","error":{"code":502,"message":"${upstream}"}}`,
    );
    expect((await journalled("choice-error-1")).run).toMatchObject({ outcome: "error", steps: 0 });
    // The first run's two requests, then one and agent.retries (2) more.
    expect(model.requests).toHaveLength(5);
  });

  it("an answer whose choice failed with an error no later try changes (a provider's 400) fails the run at once", async () => {
    model.script(failedChoice(400, "Provider returned error: invalid tool schema"));
    await signedPost("no_tools", {}, "choice-error-400");
    const [notice] = await chatMessages(1);
    expect(notice).toContain('(HTTP 200): {"finish_reason":"error","error":{"code":400,');
    expect(model.requests).toHaveLength(1);
  });

  it("an MCP server's sampling request is answered by the model with sampling.model and the clamped max_tokens", async () => {
    model.script(
      callTool("mcp__notes__ask_model", { prompt: "summarize" }),
      { text: "a summary" },
      { text: "final" },
    );
    await signedPost("triage", { issue: { title: "sample" } }, "sample-1");
    expect(await chatMessages(1)).toEqual(["final"]);
    const sampling = chat(1);
    expect(sampling.model).toBe("sampler-model");
    expect(sampling.max_tokens).toBe(64);
    expect(sampling.tools).toBeUndefined();
    expect(sampling.messages.at(-1)).toEqual({ role: "user", content: "user: summarize" });
    expect(toolMessages(2)).toEqual(["sampler-model: a summary"]);
  });

  it("the sampling result names the model the endpoint answered with (MCP: the model that generated the message), not the one asked for", async () => {
    model.script(
      callTool("mcp__notes__ask_model", { prompt: "summarize" }),
      { text: "a summary", model: "sampler-model-2025-06-01" },
      { text: "final" },
    );
    await signedPost("triage", { issue: { title: "sample" } }, "sample-3");
    expect(await chatMessages(1)).toEqual(["final"]);
    expect(chat(1).model).toBe("sampler-model");
    expect(toolMessages(2)).toEqual(["sampler-model-2025-06-01: a summary"]);
  });

  it("without sampling.model, sampling uses agent.model and reports it as the model", async () => {
    model.script(
      callTool("mcp__other__ask_model", { prompt: "hi" }),
      { text: "hello back" },
      { text: "done" },
    );
    await signedPost("only_other", {}, "sample-2");
    expect(await chatMessages(1)).toEqual(["done"]);
    expect(chat(1).model).toBe("test-model");
    expect(toolMessages(2)).toEqual(["test-model: hello back"]);
  });

  it("a cron job fired by a route runs through the same runner and tools", async () => {
    model.script(callTool("mcp__other__lookup", { key: "digest" }), { text: "digest sent" });
    await signedPost("digest", {}, "cron-1");
    expect(await chatMessages(1)).toEqual(["digest sent"]);
    expect(chat(0).messages.at(-1)).toMatchObject({
      role: "user",
      content: expect.stringMatching(/^daily digest/),
    });
    expect(other.calls).toEqual([{ tool: "lookup", args: { key: "digest" } }]);
  });
});
