import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { startFakeAnthropic } from "../../fakes/anthropicServer.js";
import type { FakeApi } from "../../fakes/httpFake.js";
import { startFakeOpenAI } from "../../fakes/openaiServer.js";
import { sentTexts, startFakeTelegram } from "../../fakes/telegram.js";
import { type RecordingMcp, startRecordingMcp } from "../../fixtures/mcp/recordingServer.js";
import { closedPort } from "../../helpers/closedPort.js";
import { gatewayPerTest, startGatewayInHome, webhookConfig } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";
import { journalLines } from "../../helpers/runJournal.js";
import { telegramMessages } from "../../helpers/telegramMessages.js";

/** The Anthropic path, an endpoint that is down, and a shutdown during a run (docs/agent.md, "Faults"). */

const OPEN = "INSECURE_NO_AUTH";
const perTest = gatewayPerTest();
let telegram: FakeApi;
let notes: RecordingMcp;

beforeAll(async () => {
  [telegram, notes] = await Promise.all([startFakeTelegram(), startRecordingMcp()]);
});
afterAll(async () => {
  await Promise.all([telegram?.close(), notes?.close()]);
});

const chatTarget = { deliver: "telegram", deliver_extra: { chat_id: "-5" } };
const telegramPlatform = () => ({ telegram: { enabled: true, token: "1:tg", base_url: telegram.url } });

const chatMessages = (count: number) => telegramMessages(telegram, count);

describe("provider anthropic", () => {
  it("speaks the Messages API with x-api-key: system text with the skill, tool_use → MCP tool → tool_result, final text delivered", async () => {
    const model = await startFakeAnthropic();
    try {
      model.script(
        { text: "Let me look.", toolCalls: [{ name: "mcp__notes__lookup", args: { key: "k1" } }] },
        { text: "Found it." },
      );
      telegram.requests.length = 0;
      const gw = await perTest.start({
        files: { "skills/review/SKILL.md": "Review carefully.\n" },
        env: { CLAUDE_KEY: "sk-ant-test-0123456789" },
        config: webhookConfig(
          { review: { secret: OPEN, prompt: "PR {n}", skills: ["review"], ...chatTarget } },
          {},
          {
            agent: {
              provider: "anthropic",
              model: "claude-test",
              base_url: model.baseUrl,
              api_key: `$\{CLAUDE_KEY}`,
              system_prompt: "Be brief.",
            },
            mcp_servers: { notes: { url: notes.url } },
            platforms: telegramPlatform(),
          },
        ),
      });
      expect((await postJson(gw.url("/webhooks/review"), { n: 9 })).status).toBe(202);
      // The reply is the final turn's text.
      expect(await chatMessages(1)).toEqual(["Found it."]);
      const [first, second] = model.requests;
      expect(first?.path).toBe("/v1/messages");
      expect(first?.headers["x-api-key"]).toBe("sk-ant-test-0123456789");
      expect(first?.headers.authorization).toBeUndefined();
      expect(first?.json).toMatchObject({
        model: "claude-test",
        max_tokens: 4096,
        system: [{ type: "text", text: "Be brief.\n\n# Skill: review\n\nReview carefully." }],
        messages: [{ role: "user", content: [{ type: "text", text: "PR 9" }] }],
      });
      const tools = ((first?.json.tools ?? []) as Array<{ name: string }>).map((t) => t.name);
      // The default svc-webhook built-ins (web_search needs a backend), then the server's tools.
      expect(tools.sort()).toEqual([
        "clarify",
        "mcp__notes__ask_model",
        "mcp__notes__delete_item",
        "mcp__notes__lookup",
        "vision_analyze",
        "web_extract",
      ]);
      const messages = (second?.json.messages ?? []) as Array<{
        role: string;
        content: Array<Record<string, unknown>>;
      }>;
      expect(messages.at(-1)).toMatchObject({
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "toolu_0_0", content: "value of k1" }],
      });
      expect(readFileSync(join(gw.home.dir, "logs", "gateway.log"), "utf8")).not.toContain("sk-ant-test");
    } finally {
      await model.close();
    }
  });
});

describe("provider anthropic against a server that speaks the Messages API for other models", () => {
  it("a thinking block without a signature (Ollama's, for a model that thinks) is read: the tool runs, the reply is delivered, the thinking goes back", async () => {
    const model = await startFakeAnthropic();
    try {
      model.script(
        {
          unsignedThinking: "The user wants k1 looked up.",
          toolCalls: [{ name: "mcp__notes__lookup", args: { key: "k1" } }],
        },
        { unsignedThinking: "I have it.", text: "Found it." },
      );
      telegram.requests.length = 0;
      const gw = await perTest.start({
        config: webhookConfig(
          { local: { secret: OPEN, prompt: "look up k1", toolsets: ["notes"], ...chatTarget } },
          {},
          {
            agent: { provider: "anthropic", model: "qwen3", base_url: model.baseUrl, api_key: "ollama" },
            mcp_servers: { notes: { url: notes.url } },
            platforms: telegramPlatform(),
          },
        ),
      });
      expect((await postJson(gw.url("/webhooks/local"), {})).status).toBe(202);
      expect(await chatMessages(1)).toEqual(["Found it."]);
      const messages = (model.requests[1]?.json.messages ?? []) as Array<{ role: string; content: unknown }>;
      expect(messages[1]).toEqual({
        role: "assistant",
        content: [
          { type: "thinking", thinking: "The user wants k1 looked up.", signature: "" },
          { type: "tool_use", id: "toolu_0_0", name: "mcp__notes__lookup", input: { key: "k1" } },
        ],
      });
    } finally {
      await model.close();
    }
  });
});

describe("provider anthropic against a server that counts no tokens", () => {
  it("an answer without usage is read: the tool runs, the reply is delivered, the run records no tokens", async () => {
    const model = await startFakeAnthropic();
    try {
      model.script(
        { toolCalls: [{ name: "mcp__notes__lookup", args: { key: "k1" } }], noUsage: true },
        { text: "Found it.", noUsage: true },
      );
      telegram.requests.length = 0;
      const gw = await perTest.start({
        config: webhookConfig(
          { bare: { secret: OPEN, prompt: "look up k1", toolsets: ["notes"], ...chatTarget } },
          {},
          {
            agent: { provider: "anthropic", model: "local", base_url: model.baseUrl, retries: 0 },
            mcp_servers: { notes: { url: notes.url } },
            platforms: telegramPlatform(),
          },
        ),
      });
      expect((await postJson(gw.url("/webhooks/bare"), {})).status).toBe(202);
      expect(await chatMessages(1)).toEqual(["Found it."]);
      const line = await vi.waitFor(
        () => {
          const found = journalLines<{ run?: Record<string, unknown> }>(gw.home.dir)[0];
          if (found === undefined) throw new Error("not journalled yet");
          return found;
        },
        { timeout: 5000, interval: 20 },
      );
      expect(line.run).toMatchObject({ outcome: "ok", steps: 2, usage: { input: 0, output: 0 } });
    } finally {
      await model.close();
    }
  });
});

describe("provider anthropic against a server that takes the key only as a Bearer token", () => {
  it("a 401 to x-api-key from another server than Anthropic's is followed by the request with Authorization: Bearer, and the endpoint's later requests are sent so at once", async () => {
    const KEY = "ollama-cloud-key-0123456789";
    const seen: Array<{ apiKey: string | undefined; authorization: string | undefined }> = [];
    // As Ollama's cloud answers (https://ollama.com/v1/messages): Bearer only.
    const cloud = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        const apiKey = req.headers["x-api-key"] as string | undefined;
        seen.push({ apiKey, authorization: req.headers.authorization });
        if (req.headers.authorization !== `Bearer ${KEY}`) {
          res.writeHead(401, { "content-type": "application/json" }).end(
            JSON.stringify({
              type: "error",
              error: { type: "authentication_error", message: "Unauthorized" },
              request_id: "req_1",
            }),
          );
          return;
        }
        res.writeHead(200, { "content-type": "application/json" }).end(
          JSON.stringify({
            id: `msg_${seen.length}`,
            type: "message",
            role: "assistant",
            model: "glm-5",
            content: [{ type: "text", text: `answer ${seen.length}` }],
            stop_reason: "end_turn",
            usage: { input_tokens: 4, output_tokens: 2 },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => cloud.listen(0, "127.0.0.1", resolve));
    try {
      telegram.requests.length = 0;
      const gw = await perTest.start({
        env: { CLOUD_KEY: KEY },
        config: webhookConfig(
          { cloud: { secret: OPEN, prompt: "hello", toolsets: ["no_mcp"], ...chatTarget } },
          {},
          {
            agent: {
              provider: "anthropic",
              model: "glm-5",
              base_url: `http://127.0.0.1:${(cloud.address() as AddressInfo).port}/v1`,
              api_key: `$\{CLOUD_KEY}`,
              retries: 0,
            },
            platforms: telegramPlatform(),
          },
        ),
      });
      expect((await postJson(gw.url("/webhooks/cloud"), {})).status).toBe(202);
      expect(await chatMessages(1)).toEqual(["answer 2"]);
      expect(seen).toEqual([
        { apiKey: KEY, authorization: undefined },
        { apiKey: undefined, authorization: `Bearer ${KEY}` },
      ]);
      // Learned: the next run's request carries the Bearer token at once.
      expect((await postJson(gw.url("/webhooks/cloud"), {})).status).toBe(202);
      expect(await chatMessages(2)).toEqual(["answer 2", "answer 3"]);
      expect(seen[2]).toEqual({ apiKey: undefined, authorization: `Bearer ${KEY}` });
    } finally {
      await new Promise<void>((resolve) => cloud.close(() => resolve()));
    }
  });
});

describe("faults", () => {
  it("a model endpoint that is down: the run fails with a clear error, a failure notice is delivered, the gateway stays up", async () => {
    telegram.requests.length = 0;
    const port = await closedPort();
    const gw = await perTest.start({
      config: webhookConfig(
        { down: { secret: OPEN, prompt: "hello", toolsets: ["no_mcp"], ...chatTarget } },
        {},
        {
          agent: { provider: "openai", model: "m", base_url: `http://127.0.0.1:${port}/v1`, retries: 0 },
          platforms: telegramPlatform(),
        },
      ),
    });
    expect((await postJson(gw.url("/webhooks/down"), {}, { "X-Request-ID": "down-1" })).status).toBe(202);
    const [notice] = await chatMessages(1);
    expect(notice).toMatch(
      new RegExp(
        `^⚠️ Agent run failed: model endpoint http://127\\.0\\.0\\.1:${port}/v1/chat/completions could not be reached: .*ECONNREFUSED.* — nothing listens on port ${port} of 127\\.0\\.0\\.1: start the model server, or write its host and port in agent\\.base_url$`,
      ),
    );
    await vi.waitFor(
      () =>
        expect(gw.logs().some((l) => l.msg.startsWith("[agent] down down-1: error (model endpoint"))).toBe(
          true,
        ),
      { timeout: 10_000 },
    );
    // Still serving: the next event is accepted.
    expect((await postJson(gw.url("/webhooks/down"), {}, { "X-Request-ID": "down-2" })).status).toBe(202);
    await chatMessages(2);
  });

  it("a model server that takes the request and closes the connection without answering (a crash, a proxy dropping it) is not said to be unreachable", async () => {
    const dropping = createServer((req) => {
      req.resume();
      req.on("end", () => req.socket.destroy());
    });
    await new Promise<void>((resolve) => dropping.listen(0, "127.0.0.1", resolve));
    const port = (dropping.address() as AddressInfo).port;
    try {
      telegram.requests.length = 0;
      const gw = await perTest.start({
        config: webhookConfig(
          { dropped: { secret: OPEN, prompt: "hello", toolsets: ["no_mcp"], ...chatTarget } },
          {},
          {
            agent: { provider: "openai", model: "m", base_url: `http://127.0.0.1:${port}/v1`, retries: 0 },
            platforms: telegramPlatform(),
          },
        ),
      });
      expect((await postJson(gw.url("/webhooks/dropped"), {})).status).toBe(202);
      const [notice] = await chatMessages(1);
      expect(notice).toBe(
        `⚠️ Agent run failed: model endpoint http://127.0.0.1:${port}/v1/chat/completions closed the connection without answering (other side closed) — the server, or a proxy in front of it, dropped the request: its log says why (a crash, a restart, a limit of its own); if it serves HTTPS on this port, write https:// in agent.base_url`,
      );
    } finally {
      await new Promise<void>((resolve) => dropping.close(() => resolve()));
    }
  });

  it("a base_url without /v1, as Ollama documents its Messages API base (ANTHROPIC_BASE_URL): the 404 notice names the base to write", async () => {
    // As Ollama (a Go server) answers a path it does not serve: it serves the Messages API at /v1/messages.
    const ollama = createServer((req, res) => {
      req.resume();
      res.writeHead(404, { "content-type": "text/plain" }).end("404 page not found");
    });
    await new Promise<void>((resolve) => ollama.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(ollama.address() as AddressInfo).port}`;
    try {
      telegram.requests.length = 0;
      const gw = await perTest.start({
        config: webhookConfig(
          { local: { secret: OPEN, prompt: "hello", toolsets: ["no_mcp"], ...chatTarget } },
          {},
          {
            agent: { provider: "anthropic", model: "qwen3-coder", base_url: base, retries: 0 },
            platforms: telegramPlatform(),
          },
        ),
      });
      expect((await postJson(gw.url("/webhooks/local"), {})).status).toBe(202);
      expect(await chatMessages(1)).toEqual([
        `⚠️ Agent run failed: model endpoint ${base}/messages answered HTTP 404: 404 page not found — check agent.model ("qwen3-coder") and agent.base_url, which names no API version: most servers answer at ${base}/v1/messages (Anthropic's SDKs add the /v1 to a base written without it, as Ollama, LiteLLM and DeepSeek document theirs; svc appends only /messages) — write ${base}/v1`,
      ]);
    } finally {
      await new Promise<void>((resolve) => ollama.close(() => resolve()));
    }
  });

  it("a base_url without /v1 on LM Studio, which answers 200 with an error for a path it does not serve: the notice names the base to write", async () => {
    // As LM Studio answers any path it does not serve ("Returning 200 anyway", its log says).
    const lmStudio = createServer((req, res) => {
      req.resume();
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ error: `Unexpected endpoint or method. (${req.method} ${req.url})` }));
    });
    await new Promise<void>((resolve) => lmStudio.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(lmStudio.address() as AddressInfo).port}`;
    try {
      telegram.requests.length = 0;
      const gw = await perTest.start({
        config: webhookConfig(
          { local: { secret: OPEN, prompt: "hello", toolsets: ["no_mcp"], ...chatTarget } },
          {},
          {
            agent: { provider: "openai", model: "qwen3-8b", base_url: base, retries: 0 },
            platforms: telegramPlatform(),
          },
        ),
      });
      expect((await postJson(gw.url("/webhooks/local"), {})).status).toBe(202);
      expect(await chatMessages(1)).toEqual([
        `⚠️ Agent run failed: model endpoint ${base}/chat/completions gave an answer svc cannot use (HTTP 200): {"error":"Unexpected endpoint or method. (POST /chat/completions)"} — check agent.base_url, which names no API version: most servers answer at ${base}/v1/chat/completions (svc appends only /chat/completions) — write ${base}/v1`,
      ]);
    } finally {
      await new Promise<void>((resolve) => lmStudio.close(() => resolve()));
    }
  });

  it("a base_url that leads to a web page answered 200 (a web UI, not its API): the notice says base_url names no model API", async () => {
    // As a web UI in front of a model server (Open WebUI, a dashboard) answers any path with its page.
    const webUi = createServer((req, res) => {
      req.resume();
      res
        .writeHead(200, { "content-type": "text/html" })
        .end("<!doctype html><html><head><title>Open WebUI</title></head><body></body></html>");
    });
    await new Promise<void>((resolve) => webUi.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(webUi.address() as AddressInfo).port}/v1`;
    try {
      telegram.requests.length = 0;
      const gw = await perTest.start({
        config: webhookConfig(
          { local: { secret: OPEN, prompt: "hello", toolsets: ["no_mcp"], ...chatTarget } },
          {},
          {
            agent: { provider: "openai", model: "llama3.1", base_url: base, retries: 0 },
            platforms: telegramPlatform(),
          },
        ),
      });
      expect((await postJson(gw.url("/webhooks/local"), {})).status).toBe(202);
      expect(await chatMessages(1)).toEqual([
        `⚠️ Agent run failed: model endpoint ${base}/chat/completions gave an answer svc cannot use (HTTP 200): an HTML page "Open WebUI" (79 characters, not shown) — a web page, not the model API: check agent.base_url, the base of the API itself (Ollama: http://127.0.0.1:11434/v1)`,
      ]);
    } finally {
      await new Promise<void>((resolve) => webUi.close(() => resolve()));
    }
  });

  it("a model that does not answer within agent.timeout_seconds: the run ends with a failure notice", async () => {
    const model = await startFakeOpenAI();
    try {
      telegram.requests.length = 0;
      model.script({ hang: true });
      const gw = await perTest.start({
        config: webhookConfig(
          { slow: { secret: OPEN, prompt: "hello", toolsets: ["no_mcp"], ...chatTarget } },
          {},
          {
            agent: { provider: "openai", model: "m", base_url: model.baseUrl, timeout_seconds: 0.3 },
            platforms: telegramPlatform(),
          },
        ),
      });
      expect((await postJson(gw.url("/webhooks/slow"), {})).status).toBe(202);
      expect(await chatMessages(1)).toEqual([
        "⚠️ Agent run failed: the run took longer than agent.timeout_seconds (0.3 s)",
      ]);
    } finally {
      await model.close();
    }
  });

  it("shutdown aborts a run waiting on the model; it is saved for the next start, with no failure notice", async () => {
    const model = await startFakeOpenAI();
    const home = tempHome();
    try {
      telegram.requests.length = 0;
      model.script({ hang: true });
      home.write(
        "config.yaml",
        stringify(
          webhookConfig(
            { slow: { secret: OPEN, prompt: "wait", toolsets: ["no_mcp"], ...chatTarget } },
            { host: "127.0.0.1" },
            {
              agent: { provider: "openai", model: "m", base_url: model.baseUrl },
              platforms: telegramPlatform(),
            },
          ),
        ),
      );
      const gateway = await startGatewayInHome(home, 200);
      const res = await postJson(
        `http://127.0.0.1:${gateway.port}/webhooks/slow`,
        {},
        { "X-Request-ID": "slow-1" },
      );
      expect(res.status).toBe(202);
      await vi.waitFor(() => expect(model.requests).toHaveLength(1), { timeout: 5000, interval: 20 });
      await gateway.stop();
      const pending = join(home.dir, "webhook-pending-runs.json");
      expect(existsSync(pending)).toBe(true);
      expect(readFileSync(pending, "utf8")).toContain("slow-1");
      expect(sentTexts(telegram)).toEqual([]);
      // The stop ended the run before saving it: its [agent] line says so, and it is not journaled.
      const log = readFileSync(join(home.dir, "logs", "gateway.log"), "utf8");
      expect(log).toContain("[agent] slow slow-1: aborted (the gateway stopped during the run)");
      expect(existsSync(join(home.dir, "sessions", "webhook-runs"))).toBe(false);
    } finally {
      await model.close();
      home.cleanup();
    }
  });

  it("shutdown while the reply's delivery waits to retry: the run is saved for the next start, and not journaled", async () => {
    const [model, chat] = await Promise.all([startFakeOpenAI(), startFakeTelegram()]);
    const home = tempHome();
    try {
      model.script({ text: "the answer" });
      // The chat answers 502 to the start's check and to the reply: the delivery waits to retry.
      const badGateway = { status: 502, json: { ok: false, error_code: 502, description: "Bad Gateway" } };
      chat.enqueue(badGateway, badGateway);
      home.write(
        "config.yaml",
        stringify(
          webhookConfig(
            { busy: { secret: OPEN, prompt: "go", toolsets: ["no_mcp"], ...chatTarget } },
            { host: "127.0.0.1" },
            {
              agent: { provider: "openai", model: "m", base_url: model.baseUrl },
              platforms: { telegram: { enabled: true, token: "1:tg", base_url: chat.url } },
            },
          ),
        ),
      );
      const gateway = await startGatewayInHome(home, 200);
      const res = await postJson(
        `http://127.0.0.1:${gateway.port}/webhooks/busy`,
        {},
        { "X-Request-ID": "busy-1" },
      );
      expect(res.status).toBe(202);
      const log = () => readFileSync(join(home.dir, "logs", "gateway.log"), "utf8");
      await vi.waitFor(() => expect(log()).toContain("HTTP 502 — Bad Gateway — retry 1/"), {
        timeout: 5000,
        interval: 20,
      });
      await gateway.stop();
      // The run did not finish (its reply was not delivered): it runs again at the next start, so no
      // line of the run journal says it finished.
      expect(readFileSync(join(home.dir, "webhook-pending-runs.json"), "utf8")).toContain("busy-1");
      expect(log()).toContain("not delivered — the gateway stopped while the delivery was under way");
      expect(existsSync(join(home.dir, "sessions", "webhook-runs"))).toBe(false);
    } finally {
      await Promise.all([model.close(), chat.close()]);
      home.cleanup();
    }
  });
});
