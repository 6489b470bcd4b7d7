import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { FakeApi } from "../../fakes/httpFake.js";
import { startFakeOpenAI } from "../../fakes/openaiServer.js";
import { startFakeTelegram } from "../../fakes/telegram.js";
import { gatewayPerTest, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { journalLines } from "../../helpers/runJournal.js";
import { type StatelessJsonMcp, serveStatelessJsonMcp } from "../../helpers/statelessJsonMcp.js";
import { telegramMessages } from "../../helpers/telegramMessages.js";

/**
 * A server whose `trust` is empty (`trust: ""`) is treated as untrusted, and a run's refused call says so
 * with the value quoted (docs/mcp.md, the `trust` key): the model and the run journal get the reason.
 */

let saved = 0;
function notes(): McpServer {
  const server = new McpServer({ name: "notes", version: "1.0.0" });
  server.registerTool("save", {}, () => {
    saved += 1;
    return { content: [{ type: "text", text: "saved" }] };
  });
  return server;
}

const perTest = gatewayPerTest();
let mcp: StatelessJsonMcp | undefined;
let telegram: FakeApi;

beforeAll(async () => {
  mcp = await serveStatelessJsonMcp(notes);
  telegram = await startFakeTelegram();
});
afterAll(async () => {
  await telegram?.close();
  await mcp?.close();
});

describe('trust: ""', () => {
  it("a run's call of a tool without readOnlyHint is refused, naming the empty value and that it is treated as untrusted", async () => {
    const model = await startFakeOpenAI();
    try {
      const gw = await perTest.start({
        config: webhookConfig(
          {
            r: {
              secret: "INSECURE_NO_AUTH",
              prompt: "save it",
              deliver: "telegram",
              deliver_extra: { chat_id: "-7" },
            },
          },
          {},
          {
            agent: { provider: "openai", model: "m", base_url: model.baseUrl },
            mcp_servers: { notes: { url: mcp?.url, trust: "" } },
            platforms: { telegram: { enabled: true, token: "1:tg", base_url: telegram.url } },
          },
        ),
      });
      model.script({ toolCalls: [{ name: "mcp__notes__save", args: {} }] }, { text: "done" });
      expect((await postJson(gw.url("/webhooks/r"), {})).status).toBe(202);
      expect(await telegramMessages(telegram, 1)).toEqual(["done"]);
      const error =
        'refused: mcp_servers.notes: calling "save" needs approval (trust: "", an empty value, so the server is treated as untrusted — write trust: full or trust: untrusted) and it was denied. No one is present to approve calls in a webhook or cron run (the operator can set trust: full on the server, or gateway.approvals: allow); the tool was not run';
      const calls = await vi.waitFor(
        () => {
          const run = journalLines<{ run?: { toolCalls: unknown[] } }>(gw.home.dir)[0]?.run;
          if (run === undefined) throw new Error("not journalled yet");
          return run.toolCalls;
        },
        { timeout: 5000, interval: 20 },
      );
      expect(calls).toEqual([{ name: "mcp__notes__save", ms: expect.any(Number), ok: false, error }]);
      const messages = (model.requests[1]?.json.messages ?? []) as Array<{ role: string; content: unknown }>;
      expect(messages.find((m) => m.role === "tool")?.content).toBe(error);
      expect(saved).toBe(0);
    } finally {
      await model.close();
    }
  });
});
