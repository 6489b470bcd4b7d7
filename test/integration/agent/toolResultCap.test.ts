import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { startFakeAnthropic } from "../../fakes/anthropicServer.js";
import { type FakeModel, startFakeOpenAI } from "../../fakes/openaiServer.js";
import { fakeTelegramPerFile } from "../../fakes/telegram.js";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { gatewayPerTest, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { journalLines } from "../../helpers/runJournal.js";
import { telegramMessages } from "../../helpers/telegramMessages.js";

/**
 * A tool result longer than agent.max_tool_result_chars reaches the model cut, ending with a line saying
 * so (docs/agent.md, Tools in a run): a real stdio MCP server whose tool "big" answers `bytes` x's.
 */

const SERVER = await bundledFixture(join(import.meta.dirname, "../../fixtures/mcp/stdio-server.mjs"));
const OPEN = "INSECURE_NO_AUTH";
const perTest = gatewayPerTest();
const telegram = fakeTelegramPerFile();

const NOTE = (chars: number, shown: number) =>
  `[… cut: the tool's result was ${chars} characters; the first ${shown} are shown (agent.max_tool_result_chars)]`;

/** A gateway whose route `big` runs `provider` against `model`, with the stdio server's tools only. */
function start(provider: "openai" | "anthropic", model: FakeModel, agent: Record<string, unknown> = {}) {
  return perTest.start({
    config: webhookConfig(
      {
        big: {
          secret: OPEN,
          prompt: "read it",
          toolsets: ["files"],
          deliver: "telegram",
          deliver_extra: { chat_id: "-7" },
        },
      },
      {},
      {
        agent: { provider, model: "test-model", base_url: model.baseUrl, ...agent },
        mcp_servers: { files: { command: process.execPath, args: [SERVER, "--big-tool"] } },
        platforms: { telegram: { enabled: true, token: "1:tg", base_url: telegram().url } },
      },
    ),
  });
}

/** Runs the route once: the model calls `big` for `bytes` characters, then answers "done". */
function runBig(gw: TestGateway, model: FakeModel, bytes: number, fail?: true) {
  return runCall(gw, model, { bytes, ...(fail && { fail }) });
}

/** Runs the route once: the model calls `big` with `args` (an object, or a text sent as is), then answers "done". */
async function runCall(gw: TestGateway, model: FakeModel, args: unknown) {
  model.requests.length = 0;
  telegram().requests.length = 0;
  const before = journalLines(gw.home.dir).length;
  model.script({ toolCalls: [{ name: "mcp__files__big", args }] }, { text: "done" });
  expect((await postJson(gw.url("/webhooks/big"), {})).status).toBe(202);
  expect(await telegramMessages(telegram(), 1)).toEqual(["done"]);
  return vi.waitFor(
    () => {
      const lines = journalLines<{ run?: { toolCalls: Array<Record<string, unknown>> } }>(gw.home.dir);
      const line = lines[before];
      if (line?.run === undefined) throw new Error("not journalled yet");
      return line.run.toolCalls;
    },
    { timeout: 5000, interval: 20 },
  );
}

const chatToolResult = (model: FakeModel) =>
  ((model.requests[1]?.json.messages ?? []) as Array<{ role: string; content: unknown }>).find(
    (m) => m.role === "tool",
  )?.content;

const messagesToolResult = (model: FakeModel) => {
  const messages = (model.requests[1]?.json.messages ?? []) as Array<{
    role: string;
    content: Array<{ type: string; content?: unknown }>;
  }>;
  return messages.at(-1)?.content.find((c) => c.type === "tool_result")?.content;
};

describe("agent.max_tool_result_chars (default 100000)", () => {
  it("openai: a 300000-character MCP result reaches the model as its first 100000 and the note; the journal and log say it was cut", async () => {
    const model = await startFakeOpenAI();
    try {
      const gw = await start("openai", model);
      const calls = await runBig(gw, model, 300_000);
      expect(chatToolResult(model)).toBe(`${"x".repeat(100_000)}\n${NOTE(300_000, 100_000)}`);
      // The record says so; the result itself is not journalled.
      expect(calls).toEqual([
        {
          name: "mcp__files__big",
          ms: expect.any(Number),
          ok: true,
          cut: { chars: 300_000, shown: 100_000 },
        },
      ]);
      const log = readFileSync(join(gw.home.dir, "logs", "gateway.log"), "utf8");
      expect(log).toMatch(/mcp__files__big ok \d+ms \(cut to 100000 of 300000 chars\)/);
      expect(log).not.toContain("x".repeat(1000));

      // A result under the cap reaches the model unchanged, and its record says nothing of a cut.
      const small = await runBig(gw, model, 5000);
      expect(chatToolResult(model)).toBe("x".repeat(5000));
      expect(small).toEqual([{ name: "mcp__files__big", ms: expect.any(Number), ok: true }]);
    } finally {
      await model.close();
    }
  });

  it("anthropic: the tool_result holds the cut text and the note", async () => {
    const model = await startFakeAnthropic();
    try {
      const gw = await start("anthropic", model);
      const calls = await runBig(gw, model, 300_000);
      expect(messagesToolResult(model)).toBe(`${"x".repeat(100_000)}\n${NOTE(300_000, 100_000)}`);
      expect(calls[0]?.cut).toEqual({ chars: 300_000, shown: 100_000 });

      // A failed call's text (MCP isError: a stack trace, a log dump) is held to the cap too, and so is
      // the error its record keeps.
      const failed = await runBig(gw, model, 300_000, true);
      expect(messagesToolResult(model)).toBe(`${"x".repeat(100_000)}\n${NOTE(300_000, 100_000)}`);
      expect(failed).toEqual([
        {
          name: "mcp__files__big",
          ms: expect.any(Number),
          ok: false,
          error: `${"x".repeat(100_000)}\n${NOTE(300_000, 100_000)}`,
          cut: { chars: 300_000, shown: 100_000 },
        },
      ]);
    } finally {
      await model.close();
    }
  });

  it("a cap set in config.yaml is used, and 0 sends every result whole", async () => {
    const model = await startFakeOpenAI();
    try {
      const capped = await start("openai", model, { max_tool_result_chars: 1000 });
      const calls = await runBig(capped, model, 1001);
      expect(chatToolResult(model)).toBe(`${"x".repeat(1000)}\n${NOTE(1001, 1000)}`);
      expect(calls[0]?.cut).toEqual({ chars: 1001, shown: 1000 });
      // The error of a call no tool ran, which quotes what the model wrote (3000 characters of arguments
      // that are not JSON), is held to the cap as well, in what the model is sent and in the record.
      const [unparsed] = await runCall(capped, model, `{"bytes": ${"9".repeat(3000)}`);
      const sent = String(chatToolResult(model));
      expect(sent).toMatch(
        /^Invalid input for tool mcp__files__big: JSON parsing failed: [\s\S]{900,1000}\n\[… cut: the tool's result was \d+ characters; the first 1000 are shown \(agent\.max_tool_result_chars\)\]$/,
      );
      expect(unparsed).toEqual({
        name: "mcp__files__big",
        ms: 0,
        ok: false,
        error: sent,
        cut: { chars: expect.any(Number), shown: 1000 },
      });
      await capped.stop();
      const whole = await start("openai", model, { max_tool_result_chars: 0 });
      const wholeCalls = await runBig(whole, model, 300_000);
      expect(chatToolResult(model)).toBe("x".repeat(300_000));
      expect(wholeCalls[0]?.cut).toBeUndefined();
    } finally {
      await model.close();
    }
  });
});
