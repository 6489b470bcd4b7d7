import { expect, it } from "vitest";
import { startFakeAnthropic } from "../../fakes/anthropicServer.js";
import type { FakeModel, ModelRequest } from "../../fakes/modelScript.js";
import { startFakeOpenAI } from "../../fakes/openaiServer.js";
import { fakeTelegramPerFile } from "../../fakes/telegram.js";
import { filesToolRouteConfig } from "../../helpers/filesToolRoute.js";
import { gatewayPerTest } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { telegramMessages } from "../../helpers/telegramMessages.js";

/**
 * A tool call whose arguments hold a number a double does not hold (an id past 2^53, `1e400`) is refused
 * with a tool error naming the number, and the server never gets a neighbouring one (docs/agent-tools.md):
 * JSON.parse read `1234567890123456789` as `1234567890123456800`, and the server got that. The real stdio
 * MCP server's `add` answers with the sum of what it received; numbers a double holds (`1.0`, `1e3`) pass, and so do
 * fractions with more digits than a double keeps (`0.10000000000000001`), rounded as `0.1` is.
 * Chat Completions `arguments` as text and as an object, Messages API `input`; answered as JSON and as an
 * event stream. Real sockets on 127.0.0.1: the fake model, a real stdio MCP server, a fake Telegram chat.
 */

const perTest = gatewayPerTest();
const telegram = fakeTelegramPerFile();

type Provider = "openai" | "anthropic";

const refused = (number: string, what = "an integer past 2^53") =>
  `arguments hold ${number}, ${what} that svc cannot pass exactly; the tool was not run — write it as a string ("${number}")`;

/** The tool results the model is sent back, in order. */
function results(provider: Provider, request: ModelRequest | undefined): string[] {
  if (provider === "openai") {
    const messages = (request?.json.messages ?? []) as Array<{ role: string; content: unknown }>;
    return messages.filter((m) => m.role === "tool").map((m) => String(m.content));
  }
  const messages = (request?.json.messages ?? []) as Array<{
    content: Array<{ type: string; content?: unknown }> | string;
  }>;
  return messages
    .flatMap((m) => (Array.isArray(m.content) ? m.content : []))
    .filter((b) => b.type === "tool_result")
    .map((b) =>
      typeof b.content === "string"
        ? b.content
        : (b.content as Array<{ text?: string }>).map((part) => part.text ?? "").join(""),
    );
}

type Setup = {
  readonly provider: "openai" | "anthropic";
  readonly streamAlways: boolean;
  readonly asObject: boolean;
};

/**
 * One model turn calling mcp__files__add with each of `argsList` (written as the setup's server writes them),
 * then a reply: the tool results the model is sent back, once the reply was delivered.
 */
async function resultsOfCalls({ provider, streamAlways, asObject }: Setup, argsList: readonly string[]) {
  const start = provider === "openai" ? startFakeOpenAI : startFakeAnthropic;
  const model: FakeModel = await start({ streamAlways });
  telegram().requests.length = 0;
  try {
    const gw = await perTest.start({
      config: filesToolRouteConfig("ids", provider, model, telegram().url),
    });
    const call = (args: string) => ({
      name: "mcp__files__add",
      args,
      // Chat Completions' arguments are text as written; an object (there) or an input is written raw.
      ...(provider === "anthropic" || asObject ? { rawObject: true as const } : {}),
      ...(asObject ? { argumentsAsObject: true as const } : {}),
    });
    model.script({ toolCalls: argsList.map(call) }, { text: "after the calls" });
    expect((await postJson(gw.url("/webhooks/ids"), {})).status).toBe(202);
    expect(await telegramMessages(telegram(), 1)).toEqual(["after the calls"]);
    expect(model.requests).toHaveLength(2);
    return results(provider, model.requests[1]);
  } finally {
    await model.close();
  }
}

it.each([
  { provider: "openai", streamAlways: false, asObject: false },
  { provider: "openai", streamAlways: false, asObject: true },
  { provider: "openai", streamAlways: true, asObject: false },
  { provider: "anthropic", streamAlways: false, asObject: false },
  { provider: "anthropic", streamAlways: true, asObject: false },
] as const)(
  "$provider (streamed: $streamAlways, arguments as an object: $asObject): a call holding an id past 2^53 or 1e400 is refused naming it; 1.0, 1e3 and fractions longer than a double keeps reach the server",
  async (setup) => {
    expect(
      await resultsOfCalls(setup, [
        '{"a": 1234567890123456789, "b": 0}',
        '{"a": 1.0e400, "b": 0}',
        '{"a": 1.0, "b": 1e3}',
        // Fractions with more digits than a double keeps get the nearest double, as 0.1 does.
        '{"a": 0.10000000000000001, "b": 3.14159265358979323846}',
        '{"a": 2.5e-324, "b": 0.12345678901234567}',
      ]),
    ).toEqual([
      refused("1234567890123456789"),
      refused("1.0e400", "a number"),
      "1001",
      "3.241592653589793",
      "0.12345678901234566",
    ]);
  },
);

it.each([
  { provider: "openai", streamAlways: false, asObject: true },
  { provider: "openai", streamAlways: true, asObject: false },
  { provider: "anthropic", streamAlways: false, asObject: false },
  { provider: "anthropic", streamAlways: true, asObject: false },
] as const)(
  "$provider (streamed: $streamAlways, arguments as an object: $asObject): a call nested 600 levels deep in the same answer leaves another call's id past 2^53 refused",
  async (setup) => {
    expect(
      await resultsOfCalls(setup, [
        `{"a": ${"[".repeat(600)}${"]".repeat(600)}, "b": 0}`,
        '{"a": 1234567890123456789, "b": 0}',
      ]),
    ).toEqual([
      "arguments nest objects or arrays deeper than 100 levels; the tool was not run",
      refused("1234567890123456789"),
    ]);
  },
);
