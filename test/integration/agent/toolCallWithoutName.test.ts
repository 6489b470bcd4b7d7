import { expect, it, vi } from "vitest";
import { startFakeAnthropic } from "../../fakes/anthropicServer.js";
import type { FakeModel, ModelRequest } from "../../fakes/modelScript.js";
import { startFakeOpenAI } from "../../fakes/openaiServer.js";
import { fakeTelegramPerFile } from "../../fakes/telegram.js";
import { filesToolRouteConfig } from "../../helpers/filesToolRoute.js";
import { gatewayPerTest } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { journalLines } from "../../helpers/runJournal.js";
import { telegramMessages } from "../../helpers/telegramMessages.js";

/**
 * A tool call without a name, or with `name: null` (a Chat Completions `tool_calls` entry, a Messages API
 * `tool_use`), gets the tool error a call named `""` gets and the run goes on (docs/agent.md, Faults): the
 * whole answer was refused before as one svc cannot use, failing the run. Answered as JSON and as an event
 * stream (a server set to always stream). Real sockets on 127.0.0.1: the fake model, a real stdio MCP server,
 * a fake Telegram chat.
 */

const perTest = gatewayPerTest();
const telegram = fakeTelegramPerFile();

type Provider = "openai" | "anthropic";

/** The tool names of the calls in the turn sent back, and the errors sent for them. */
function sentBack(provider: Provider, request: ModelRequest | undefined) {
  if (provider === "openai") {
    const messages = (request?.json.messages ?? []) as Array<{
      role: string;
      content: unknown;
      tool_calls?: Array<{ function: { name: unknown } }>;
    }>;
    return {
      names: messages.flatMap((m) => m.tool_calls ?? []).map((c) => c.function.name),
      errors: messages.filter((m) => m.role === "tool").map((m) => String(m.content)),
    };
  }
  const messages = (request?.json.messages ?? []) as Array<{
    content: Array<{ type: string; name?: unknown; content?: unknown }> | string;
  }>;
  const blocks = messages.flatMap((m) => (Array.isArray(m.content) ? m.content : []));
  return {
    names: blocks.filter((b) => b.type === "tool_use").map((b) => b.name),
    errors: blocks.filter((b) => b.type === "tool_result").map((b) => JSON.stringify(b.content)),
  };
}

it.each([
  { provider: "openai", streamAlways: false },
  { provider: "openai", streamAlways: true },
  { provider: "anthropic", streamAlways: false },
  { provider: "anthropic", streamAlways: true },
] as const)(
  "$provider (streamed: $streamAlways): calls without a name and with a null one get a tool error, go back as unknown_tool, and the run ends ok",
  async ({ provider, streamAlways }) => {
    const start = provider === "openai" ? startFakeOpenAI : startFakeAnthropic;
    const model: FakeModel = await start({ streamAlways });
    telegram().requests.length = 0;
    try {
      const gw = await perTest.start({
        config: filesToolRouteConfig("noname", provider, model, telegram().url),
      });
      model.script(
        {
          toolCalls: [
            { name: "mcp__files__echo", args: { text: "a" }, unnamed: "absent" },
            { name: "mcp__files__echo", args: { text: "b" }, unnamed: "null" },
          ],
        },
        { text: "after the calls" },
      );
      expect((await postJson(gw.url("/webhooks/noname"), {})).status).toBe(202);
      expect(await telegramMessages(telegram(), 1)).toEqual(["after the calls"]);
      expect(model.requests).toHaveLength(2);
      const { names, errors } = sentBack(provider, model.requests[1]);
      expect(names).toEqual(["unknown_tool", "unknown_tool"]);
      expect(errors).toHaveLength(2);
      for (const error of errors)
        expect(error).toMatch(
          /Model tried to call unavailable tool \\?"\\?" \(its call is sent back as unknown_tool\)/,
        );
      const run = await vi.waitFor(
        () => {
          const line = journalLines<{
            run?: { outcome: string; toolCalls: Array<{ name: string; ok: boolean }> };
          }>(gw.home.dir)[0];
          if (line?.run === undefined) throw new Error("not journalled yet");
          return line.run;
        },
        { timeout: 5000, interval: 20 },
      );
      expect(run.outcome).toBe("ok");
      expect(run.toolCalls.map((c) => [c.name, c.ok])).toEqual([
        ["", false],
        ["", false],
      ]);
    } finally {
      await model.close();
    }
  },
);
