import { describe, expect, it, vi } from "vitest";
import { startFakeAnthropic } from "../../fakes/anthropicServer.js";
import type { FakeModel, ModelTurn } from "../../fakes/openaiServer.js";
import { startFakeOpenAI } from "../../fakes/openaiServer.js";
import { fakeTelegramPerFile } from "../../fakes/telegram.js";
import { filesToolRouteConfig } from "../../helpers/filesToolRoute.js";
import { gatewayPerTest, type TestGateway } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { journalLines } from "../../helpers/runJournal.js";
import { telegramMessages } from "../../helpers/telegramMessages.js";

/**
 * A tool name the model makes up that the model APIs do not take (`multi_tool_use.parallel`, as OpenAI's
 * models write, an empty one, a 200 000-character one) gets a tool error and the run goes on (docs/agent.md,
 * Faults): the call goes back under a name the API takes, since the fakes refuse the whole request for such
 * a name in the history as OpenAI and the Messages API do. Real sockets on 127.0.0.1: the fake model, a real
 * stdio MCP server, a fake Telegram chat.
 */

const perTest = gatewayPerTest();
const telegram = fakeTelegramPerFile();

interface Journalled {
  outcome?: string;
  run?: { outcome: string; toolCalls: Array<Record<string, unknown>> };
}

function start(provider: "openai" | "anthropic", model: FakeModel) {
  return perTest.start({ config: filesToolRouteConfig("made", provider, model, telegram().url) });
}

/** Runs the route once with `turns` scripted; the reply delivered and the run's journal record. */
async function run(gw: TestGateway, model: FakeModel, ...turns: ModelTurn[]) {
  model.requests.length = 0;
  telegram().requests.length = 0;
  const before = journalLines(gw.home.dir).length;
  model.script(...turns);
  expect((await postJson(gw.url("/webhooks/made"), {})).status).toBe(202);
  const [reply] = await telegramMessages(telegram(), 1);
  const record = await vi.waitFor(
    () => {
      const line = journalLines<Journalled>(gw.home.dir)[before];
      if (line?.run === undefined) throw new Error("not journalled yet");
      return line.run;
    },
    { timeout: 5000, interval: 20 },
  );
  return { reply, record };
}

type ChatMessage = {
  role: string;
  content: unknown;
  tool_calls?: Array<{ id: string; function: { name: string } }>;
};
const chatMessages = (model: FakeModel, i: number) =>
  (model.requests[i]?.json.messages ?? []) as ChatMessage[];

describe("a made-up tool name the model APIs do not take", () => {
  it("openai: multi_tool_use.parallel gets a tool error quoting it, goes back as multi_tool_use_parallel, and the run ends ok", async () => {
    const model = await startFakeOpenAI();
    try {
      const gw = await start("openai", model);
      const { reply, record } = await run(
        gw,
        model,
        {
          toolCalls: [
            {
              name: "multi_tool_use.parallel",
              args: {
                tool_uses: [{ recipient_name: "functions.mcp__files__echo", parameters: { text: "a" } }],
              },
            },
          ],
        },
        { text: "recovered" },
      );
      expect(reply).toBe("recovered");
      expect(record.outcome).toBe("ok");
      expect(model.requests).toHaveLength(2);
      const second = chatMessages(model, 1);
      const turn = second.find((m) => m.role === "assistant");
      expect(turn?.tool_calls?.map((c) => c.function.name)).toEqual(["multi_tool_use_parallel"]);
      const error = String(second.find((m) => m.role === "tool")?.content);
      expect(error).toMatch(
        /^Model tried to call unavailable tool "multi_tool_use\.parallel" \(its call is sent back as multi_tool_use_parallel\)\. Available tools: mcp__files__echo,/,
      );
      // The record keeps the name the model wrote, with the error the model was sent.
      expect(record.toolCalls).toEqual([{ name: "multi_tool_use.parallel", ms: 0, ok: false, error }]);
      expect(gw.logs().some((l) => l.msg.includes("multi_tool_use.parallel error 0ms"))).toBe(true);
    } finally {
      await model.close();
    }
  });

  it("openai: an empty name and a 200000-character one go back as unknown_tool and cut to 64; the log and journal hold the long one cut to 200", async () => {
    const model = await startFakeOpenAI();
    try {
      const gw = await start("openai", model);
      const long = `mcp__files__${"n".repeat(200_000)}`;
      const { reply, record } = await run(
        gw,
        model,
        {
          toolCalls: [
            { name: "", args: {} },
            { name: long, args: {} },
          ],
        },
        { text: "after both" },
      );
      expect(reply).toBe("after both");
      expect(record.outcome).toBe("ok");
      const second = chatMessages(model, 1);
      const names = second.find((m) => m.role === "assistant")?.tool_calls?.map((c) => c.function.name);
      expect(names).toEqual(["unknown_tool", long.slice(0, 64)]);
      const errors = second.filter((m) => m.role === "tool").map((m) => String(m.content));
      expect(errors[0]).toMatch(
        /^Model tried to call unavailable tool "" \(its call is sent back as unknown_tool\)/,
      );
      const recorded = `${long.slice(0, 200)}… (200012 chars)`;
      expect(record.toolCalls.map((c) => c.name)).toEqual(["", recorded]);
      const line = gw.logs().find((l) => l.msg.startsWith("[agent] made"));
      expect(line?.msg).toContain(`${recorded} error 0ms`);
      expect(line?.msg.length).toBeLessThan(2000);
    } finally {
      await model.close();
    }
  });

  it("anthropic: a tool_use named `nope.tool name` goes back as nope_tool_name and the run ends ok", async () => {
    const model = await startFakeAnthropic();
    try {
      const gw = await start("anthropic", model);
      const { reply, record } = await run(
        gw,
        model,
        { toolCalls: [{ name: "nope.tool name", args: {} }] },
        { text: "after bad name" },
      );
      expect(reply).toBe("after bad name");
      expect(record.outcome).toBe("ok");
      const messages = (model.requests[1]?.json.messages ?? []) as Array<{
        role: string;
        content: Array<{ type: string; name?: string; content?: unknown }>;
      }>;
      const uses = messages.flatMap((m) => m.content).filter((b) => b.type === "tool_use");
      expect(uses.map((b) => b.name)).toEqual(["nope_tool_name"]);
      const result = messages.flatMap((m) => m.content).find((b) => b.type === "tool_result");
      expect(JSON.stringify(result?.content)).toContain(String.raw`unavailable tool \"nope.tool name\"`);
      expect(record.toolCalls[0]?.name).toBe("nope.tool name");
    } finally {
      await model.close();
    }
  });
});
