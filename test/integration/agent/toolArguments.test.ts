import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeAnthropic } from "../../fakes/anthropicServer.js";
import type { FakeApi } from "../../fakes/httpFake.js";
import { startFakeOpenAI } from "../../fakes/openaiServer.js";
import { startFakeTelegram } from "../../fakes/telegram.js";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { gatewayPerTest, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { telegramMessages } from "../../helpers/telegramMessages.js";

/**
 * The model's arguments as a real MCP server reads them (docs/agent.md, Tools in a run): the stdio server
 * answers the `tools/call` line it read, so the test sees the JSON svc wrote to it.
 */

const SERVER = await bundledFixture(join(import.meta.dirname, "../../fixtures/mcp/listed-tools-server.mjs"));
const perTest = gatewayPerTest();
let telegram: FakeApi;

beforeAll(async () => {
  telegram = await startFakeTelegram();
});
afterAll(async () => {
  await telegram?.close();
});

const TOOLS = [
  {
    name: "find",
    description: "Find records",
    inputSchema: {
      type: "object",
      properties: {
        "filter[id]": { type: "string" },
        $top: { type: "integer" },
        query: { type: "object" },
        note: { type: "string" },
        ratio: { type: "number" },
      },
      required: ["filter[id]"],
    },
  },
];

/** What the model sends: nested objects and arrays, unicode beyond the BMP, a fraction, a negative exponent. */
const ARGS = {
  query: { and: [{ tag: "ü" }, { not: { ids: [1, -2, 3.5] } }], empty: {}, none: null, yes: true },
  note: 'naïve 😀 \t line\nbreak "quoted" \\ back',
  ratio: 1.5e-7,
};

describe("a tool call's arguments", () => {
  for (const provider of ["openai", "anthropic"] as const) {
    it(`${provider}: reach the MCP server as the model wrote them, argument names the API refused under the tool's own`, async () => {
      const model = provider === "openai" ? await startFakeOpenAI() : await startFakeAnthropic();
      try {
        const gw = await perTest.start({
          config: webhookConfig(
            {
              r: {
                secret: "INSECURE_NO_AUTH",
                prompt: "go",
                deliver: "telegram",
                deliver_extra: { chat_id: "-7" },
              },
            },
            {},
            {
              agent: { provider, model: "m", base_url: model.baseUrl },
              mcp_servers: {
                gen: {
                  command: process.execPath,
                  args: [SERVER],
                  env: {
                    LISTED_TOOLS: JSON.stringify(TOOLS),
                    LISTED_RESULTS: JSON.stringify({ find: "raw" }),
                  },
                },
              },
              platforms: { telegram: { enabled: true, token: "1:tg", base_url: telegram.url } },
            },
          ),
        });
        telegram.requests.length = 0;
        // The Messages API is offered `filter[id]` and `$top` as `filter_id_` and `_top` (it refuses those names).
        const names = provider === "openai" ? { "filter[id]": "7", $top: 2 } : { filter_id_: "7", _top: 2 };
        model.script(
          { toolCalls: [{ name: "mcp__gen__find", args: { ...names, ...ARGS } }] },
          { text: "done" },
        );
        expect((await postJson(gw.url("/webhooks/r"), {})).status).toBe(202);
        expect(await telegramMessages(telegram, 1)).toEqual(["done"]);
        // The tool's result (the server's answer) is the line it read, in the next request's tool message.
        const sent = ((model.requests[1]?.json.messages ?? []) as Array<{ content?: unknown }>)
          .flatMap((m) => (Array.isArray(m.content) ? m.content.map((c) => c.content) : [m.content]))
          .find((text): text is string => typeof text === "string" && text.includes('"tools/call"'));
        if (sent === undefined) throw new Error("no tool result holds the tools/call line");
        const call = JSON.parse(sent) as { params: { name: string; arguments: unknown } };
        expect(call.params.name).toBe("find");
        expect(call.params.arguments).toEqual({ "filter[id]": "7", $top: 2, ...ARGS });
        // The numbers as written (JSON.stringify's own text for them, which the model API used).
        expect(sent).toContain('"ratio":1.5e-7');
        expect(sent).toContain('"ids":[1,-2,3.5]');
      } finally {
        await model.close();
      }
    });
  }
});
