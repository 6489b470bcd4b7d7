import { join } from "node:path";
import { expect, it, vi } from "vitest";
import { startFakeAnthropic } from "../../fakes/anthropicServer.js";
import { fakeTelegramPerFile } from "../../fakes/telegram.js";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { gatewayPerTest, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { journalLines } from "../../helpers/runJournal.js";
import { telegramMessages } from "../../helpers/telegramMessages.js";

/**
 * A Messages API `tool_use` without an `id`, as servers in front of other models write one, is run under an
 * id svc makes up, as a Chat Completions call without one is (docs/agent.md, Faults): the run was failed
 * before as an answer svc cannot use. Real sockets on 127.0.0.1: the fake model, a real stdio MCP server, a
 * fake Telegram chat.
 */

const SERVER = await bundledFixture(join(import.meta.dirname, "../../fixtures/mcp/stdio-server.mjs"));
const perTest = gatewayPerTest();
const telegram = fakeTelegramPerFile();

it("the tool runs, its result goes back under the made-up id, and the reply is delivered", async () => {
  const model = await startFakeAnthropic();
  try {
    const gw = await perTest.start({
      config: webhookConfig(
        {
          noid: {
            secret: "INSECURE_NO_AUTH",
            prompt: "do it",
            toolsets: ["files"],
            deliver: "telegram",
            deliver_extra: { chat_id: "-7" },
          },
        },
        {},
        {
          agent: { provider: "anthropic", model: "test-model", base_url: model.baseUrl, retries: 0 },
          mcp_servers: { files: { command: process.execPath, args: [SERVER] } },
          platforms: { telegram: { enabled: true, token: "1:tg", base_url: telegram().url } },
        },
      ),
    });
    model.script(
      { toolCalls: [{ name: "mcp__files__echo", args: { text: "no id" }, withoutId: true }] },
      { text: "after the call" },
    );
    expect((await postJson(gw.url("/webhooks/noid"), {})).status).toBe(202);
    expect(await telegramMessages(telegram(), 1)).toEqual(["after the call"]);
    const messages = (model.requests[1]?.json.messages ?? []) as Array<{
      content: Array<{ type: string; id?: string; tool_use_id?: string; content?: unknown }>;
    }>;
    const blocks = messages.flatMap((m) => (Array.isArray(m.content) ? m.content : []));
    const use = blocks.find((b) => b.type === "tool_use");
    const result = blocks.find((b) => b.type === "tool_result");
    expect(use?.id).toMatch(/^[a-zA-Z0-9_-]+$/);
    expect(result?.tool_use_id).toBe(use?.id);
    expect(JSON.stringify(result?.content)).toContain("no id");
    const run = await vi.waitFor(
      () => {
        const line = journalLines<{ run?: { outcome: string; toolCalls: unknown[] } }>(gw.home.dir)[0];
        if (line?.run === undefined) throw new Error("not journalled yet");
        return line.run;
      },
      { timeout: 5000, interval: 20 },
    );
    expect(run.outcome).toBe("ok");
    expect(run.toolCalls).toEqual([{ name: "mcp__files__echo", ms: expect.any(Number), ok: true }]);
  } finally {
    await model.close();
  }
});
