import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startFakeAnthropic } from "../../fakes/anthropicServer.js";
import { type FakeModel, startFakeOpenAI } from "../../fakes/openaiServer.js";
import { fakeTelegramPerFile } from "../../fakes/telegram.js";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { gatewayPerTest, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { telegramMessages } from "../../helpers/telegramMessages.js";

/**
 * What a model endpoint receives for the schemas real MCP servers list (docs/agent.md, Tools in a run): a
 * stdio server on the SDK's low-level Server lists them as written, and the fake endpoints record the
 * request.
 */

const SERVER = await bundledFixture(join(import.meta.dirname, "../../fixtures/mcp/listed-tools-server.mjs"));
const perTest = gatewayPerTest();
const telegram = fakeTelegramPerFile();

/** Runs route `r` once against `model`, whose first turn calls `call` (if any); the run's requests. */
async function run(
  provider: "openai" | "anthropic",
  model: FakeModel,
  tools: readonly Record<string, unknown>[],
  call?: { name: string; args: Record<string, unknown> },
  /** What each tool answers (`"raw"`: the `tools/call` line the server read); the fixture's default otherwise. */
  results?: Record<string, string>,
) {
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
              LISTED_TOOLS: JSON.stringify(tools),
              ...(results === undefined ? {} : { LISTED_RESULTS: JSON.stringify(results) }),
            },
          },
        },
        platforms: { telegram: { enabled: true, token: "1:tg", base_url: telegram().url } },
      },
    ),
  });
  telegram().requests.length = 0;
  model.script(...(call === undefined ? [] : [{ toolCalls: [call] }]), { text: "done" });
  expect((await postJson(gw.url("/webhooks/r"), {})).status).toBe(202);
  expect(await telegramMessages(telegram(), 1)).toEqual(["done"]);
  return model.requests;
}

const offered = (provider: "openai" | "anthropic", body: Record<string, unknown>, name: string) => {
  const tools = (body.tools ?? []) as Array<Record<string, unknown>>;
  if (provider === "openai") {
    const found = tools.find((t) => (t.function as { name: string }).name === name);
    return (found?.function as { parameters?: unknown } | undefined)?.parameters;
  }
  return tools.find((t) => t.name === name)?.input_schema;
};

describe("an input schema whose root is a $ref into its own $defs or definitions", () => {
  // Go's invopop/jsonschema writes a struct's schema so by default; zod-to-json-schema with a `name` too.
  const ARGS = {
    type: "object",
    properties: { path: { type: "string" }, depth: { type: "integer" } },
    required: ["path"],
    additionalProperties: false,
  };
  const TOOLS = [
    {
      name: "read",
      description: "Read a file",
      inputSchema: {
        $schema: "https://json-schema.org/draft/2020-12/schema",
        $ref: "#/$defs/ReadArgs",
        $defs: { ReadArgs: ARGS },
      },
    },
    {
      name: "list",
      description: "List a directory",
      inputSchema: {
        $schema: "http://json-schema.org/draft-07/schema#",
        $ref: "#/definitions/ListArgs",
        definitions: { ListArgs: ARGS },
      },
    },
  ];

  for (const provider of ["openai", "anthropic"] as const) {
    it(`${provider}: is offered as the schema it names, so the model sees the tool's arguments`, async () => {
      const model = provider === "openai" ? await startFakeOpenAI() : await startFakeAnthropic();
      try {
        const requests = await run(provider, model, TOOLS, { name: "mcp__gen__read", args: { path: "/a" } });
        const body = requests[0]?.json ?? {};
        expect(offered(provider, body, "mcp__gen__read")).toEqual({
          $schema: "https://json-schema.org/draft/2020-12/schema",
          $defs: { ReadArgs: ARGS },
          ...ARGS,
        });
        expect(offered(provider, body, "mcp__gen__list")).toEqual({
          $schema: "http://json-schema.org/draft-07/schema#",
          definitions: { ListArgs: ARGS },
          ...ARGS,
        });
        // The call reaches the server, which answers its name.
        const next = JSON.stringify(requests[1]?.json.messages);
        expect(next).toContain('"read"');
      } finally {
        await model.close();
      }
    });
  }
});

describe("a draft-07 schema with a tuple (items as a list, as zod-to-json-schema writes z.tuple)", () => {
  const DRAFT_07 = "http://json-schema.org/draft-07/schema#";
  const TOOLS = [
    {
      name: "plot",
      description: "Plot a point",
      inputSchema: {
        $schema: DRAFT_07,
        type: "object",
        properties: {
          point: { type: "array", items: [{ type: "number" }, { type: "number" }], additionalItems: false },
        },
      },
    },
    {
      name: "tag",
      description: "Tag a note",
      inputSchema: { $schema: DRAFT_07, type: "object", properties: { tags: { type: "array" } } },
    },
  ];

  for (const provider of ["openai", "anthropic"] as const) {
    it(`${provider}: is offered in 2020-12's keywords and declaring 2020-12; one without a tuple keeps its $schema`, async () => {
      const model = provider === "openai" ? await startFakeOpenAI() : await startFakeAnthropic();
      try {
        const requests = await run(provider, model, TOOLS);
        const body = requests[0]?.json ?? {};
        expect(offered(provider, body, "mcp__gen__plot")).toEqual({
          $schema: "https://json-schema.org/draft/2020-12/schema",
          type: "object",
          properties: {
            point: { type: "array", prefixItems: [{ type: "number" }, { type: "number" }], items: false },
          },
        });
        expect(offered(provider, body, "mcp__gen__tag")).toEqual({
          $schema: DRAFT_07,
          type: "object",
          properties: { tags: { type: "array", items: {} } },
        });
      } finally {
        await model.close();
      }
    });
  }
});

describe("an input schema that writes the keywords it leaves unset as null", () => {
  // mcp-go 0.23 listed a tool without arguments with "properties": null; a Go struct without
  // omitempty or a Python model dumped with its None values writes "required": null and the like.
  const TOOLS = [
    {
      name: "me",
      description: "Who am I",
      inputSchema: { type: "object", properties: null, required: null },
    },
    {
      name: "find",
      description: "Find a note",
      inputSchema: {
        type: "object",
        properties: {
          q: { type: "string", description: null, enum: null, default: null },
          limit: { type: "integer", minimum: null, const: null },
          tags: null,
        },
        required: ["q"],
        additionalProperties: null,
      },
    },
  ];

  for (const provider of ["openai", "anthropic"] as const) {
    it(`${provider}: is registered and offered without them (a default or const of null is a value, kept)`, async () => {
      const model = provider === "openai" ? await startFakeOpenAI() : await startFakeAnthropic();
      try {
        const requests = await run(provider, model, TOOLS, { name: "mcp__gen__me", args: {} });
        const body = requests[0]?.json ?? {};
        expect(offered(provider, body, "mcp__gen__me")).toEqual({ type: "object", properties: {} });
        expect(offered(provider, body, "mcp__gen__find")).toEqual({
          type: "object",
          properties: {
            q: { type: "string", default: null },
            limit: { type: "integer", const: null },
          },
          required: ["q"],
        });
        expect(JSON.stringify(requests[1]?.json.messages)).toContain('"me"');
      } finally {
        await model.close();
      }
    });
  }
});

describe("an input schema that writes an empty map as [] (PHP's json_encode of an empty array)", () => {
  // WordPress's mcp-adapter, Laravel and Shopware servers list a tool without arguments so:
  // `"properties": []`, which OpenAI refuses ("[] is not of type 'object'") and JSON Schema does not allow.
  const TOOLS = [
    { name: "me", description: "Who am I", inputSchema: { type: "object", properties: [], required: [] } },
    {
      name: "find",
      description: "Find a post",
      inputSchema: {
        type: "object",
        properties: {
          q: { type: "string" },
          opts: { type: "object", properties: [] },
          // An array of anything, as `'items' => []` writes it (draft-07's empty tuple: any item too).
          tags: { type: "array", items: [] },
        },
        $defs: [],
      },
    },
  ];

  for (const provider of ["openai", "anthropic"] as const) {
    it(`${provider}: is registered and offered with {} in its place`, async () => {
      const model = provider === "openai" ? await startFakeOpenAI() : await startFakeAnthropic();
      try {
        const requests = await run(provider, model, TOOLS, { name: "mcp__gen__me", args: {} });
        const body = requests[0]?.json ?? {};
        expect(offered(provider, body, "mcp__gen__me")).toEqual({
          type: "object",
          properties: {},
          required: [],
        });
        expect(offered(provider, body, "mcp__gen__find")).toEqual({
          type: "object",
          properties: {
            q: { type: "string" },
            opts: { type: "object", properties: {} },
            tags: { type: "array", items: {} },
          },
          $defs: {},
        });
        expect(JSON.stringify(requests[1]?.json.messages)).toContain('"me"');
      } finally {
        await model.close();
      }
    });
  }
});

/** A tool whose argument names the Messages API refuses, and the arguments a model sends it. */
const FIND_TOOLS = [
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

/** The model's arguments as the MCP server reads them: the server answers the `tools/call` line it read. */
describe("a tool call's arguments", () => {
  for (const provider of ["openai", "anthropic"] as const) {
    it(`${provider}: reach the MCP server as the model wrote them, argument names the API refused under the tool's own`, async () => {
      const model = provider === "openai" ? await startFakeOpenAI() : await startFakeAnthropic();
      try {
        // The Messages API is offered `filter[id]` and `$top` as `filter_id_` and `_top` (it refuses those names).
        const names = provider === "openai" ? { "filter[id]": "7", $top: 2 } : { filter_id_: "7", _top: 2 };
        const requests = await run(
          provider,
          model,
          FIND_TOOLS,
          { name: "mcp__gen__find", args: { ...names, ...ARGS } },
          { find: "raw" },
        );
        // The tool's result (the server's answer) is the line it read, in the next request's tool message.
        const sent = ((requests[1]?.json.messages ?? []) as Array<{ content?: unknown }>)
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
