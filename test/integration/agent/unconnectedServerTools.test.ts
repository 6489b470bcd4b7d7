import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { type ProtectedMcp, startProtectedMcp } from "../../fakes/authServer/mcpServer.js";
import type { FakeApi } from "../../fakes/httpFake.js";
import { callTool, type FakeModel, startFakeOpenAI } from "../../fakes/openaiServer.js";
import { startFakeTelegram } from "../../fakes/telegram.js";
import { type RecordingMcp, startRecordingMcp } from "../../fixtures/mcp/recordingServer.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postSignedIssue } from "../../helpers/http.js";
import { journalLines } from "../../helpers/runJournal.js";
import { telegramMessages } from "../../helpers/telegramMessages.js";

/**
 * A run whose model calls a tool of an MCP server the run was not offered because the server was not
 * connected when the run began — an `auth: oauth` server nobody has logged in to yet (docs/agent.md,
 * Faults): the model, the journal and the run's log line get that server's own error (what to run to fix
 * it), not the generic "unavailable tool" list of every other tool. A call naming a tool no server has
 * keeps the generic answer. Real sockets on 127.0.0.1: the fake model, a real SDK MCP server that refuses
 * every request without a token, and a fake Telegram chat.
 */

const SECRET = "hook-secret-unconnected";

let model: FakeModel;
let telegram: FakeApi;
let locked: ProtectedMcp;
let open: RecordingMcp;
let gw: TestGateway;

type ChatRequest = { messages: Array<{ role: string; content: unknown }> };
const toolMessages = (i: number) =>
  ((model.requests[i]?.json as unknown as ChatRequest | undefined)?.messages ?? [])
    .filter((m) => m.role === "tool")
    .map((m) => String(m.content));

async function journalled(deliveryId: string) {
  return vi.waitFor(
    () => {
      const line = journalLines<{ delivery_id: string; run?: { toolCalls: unknown[] } }>(gw.home.dir).find(
        (l) => l.delivery_id === deliveryId,
      );
      if (line === undefined) throw new Error("not journalled yet");
      return line;
    },
    { timeout: 5000, interval: 20 },
  );
}

beforeAll(async () => {
  [model, telegram, locked, open] = await Promise.all([
    startFakeOpenAI(),
    startFakeTelegram(),
    // Refuses every token: the gateway never starts a login, so the server stays `failed`.
    startProtectedMcp(
      () => "http://127.0.0.1:9/",
      async () => false,
    ),
    startRecordingMcp(),
  ]);
  gw = await startTestGateway({
    config: webhookConfig(
      { triage: { prompt: "Issue: {issue.title}", deliver: "telegram", deliver_extra: { chat_id: "-100" } } },
      { secret: SECRET },
      {
        agent: { provider: "openai", model: "m", base_url: model.baseUrl, retries: 0 },
        mcp_servers: { notes: { url: locked.url, auth: "oauth" }, open: { url: open.url } },
        platforms: { telegram: { enabled: true, token: "1:tg", base_url: telegram.url } },
      },
    ),
  });
  await vi.waitFor(
    () => {
      if (!gw.logs().some((l) => l.msg.includes("mcp_servers.notes: not logged in")))
        throw new Error("not yet");
    },
    { timeout: 10_000, interval: 20 },
  );
});

afterAll(async () => {
  await gw?.stop();
  await Promise.all([model?.close(), telegram?.close(), locked?.close(), open?.close()]);
});

beforeEach(() => {
  model.requests.length = 0;
  telegram.requests.length = 0;
});

describe("a call to a tool of an MCP server that was not connected when the run began", () => {
  it("answers with the server's own error (not logged in — run svc mcp login), in the journal and the log too", async () => {
    model.script(callTool("mcp__notes__lookup", { key: "k" }), { text: "done" });
    const res = await postSignedIssue(gw.url("/webhooks/triage"), SECRET, { issue: { title: "t" } }, "u-1");
    expect(res.status).toBe(202);
    expect(await telegramMessages(telegram, 1)).toEqual(["done"]);
    const why =
      'mcp_servers.notes was not connected when this run began (notes: not logged in — run `svc mcp login notes`), so the run was not offered its tools; "mcp__notes__lookup" was not run';
    expect(toolMessages(1)).toEqual([why]);
    const line = await journalled("u-1");
    expect(line.run?.toolCalls).toEqual([{ name: "mcp__notes__lookup", ms: 0, ok: false, error: why }]);
  });

  it("keeps the generic answer for a tool no configured server could have", async () => {
    model.script(callTool("mcp__open__nope", {}), { text: "done" });
    await postSignedIssue(gw.url("/webhooks/triage"), SECRET, { issue: { title: "t" } }, "u-2");
    expect(await telegramMessages(telegram, 1)).toEqual(["done"]);
    expect(toolMessages(1)[0]).toMatch(
      /^Model tried to call unavailable tool 'mcp__open__nope'\. Available tools: /,
    );
  });
});
