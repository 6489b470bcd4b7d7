import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeAnthropic } from "../../fakes/anthropicServer.js";
import type { FakeApi } from "../../fakes/httpFake.js";
import { type FakeModel, startFakeOpenAI } from "../../fakes/openaiServer.js";
import { startFakeTelegram } from "../../fakes/telegram.js";
import { gatewayPerTest, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { type StatelessJsonMcp, serveStatelessJsonMcp } from "../../helpers/statelessJsonMcp.js";
import { telegramMessages } from "../../helpers/telegramMessages.js";

/**
 * An image held in a binary resource (`blob`) reaches the model as an image block does (docs/agent.md,
 * Tools in a run; docs/mcp.md, read_resource and get_prompt): from `read_resource`, an embedded resource in
 * a tool's result and a `get_prompt` message, on a Streamable HTTP server built with the SDK's McpServer.
 */

/** A 1×1 PNG. */
const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
const PNG_BYTES = Buffer.byteLength(PNG, "base64");
const ZIP = Buffer.from("PK\u0003\u0004 not much of an archive").toString("base64");

function screenshots(): McpServer {
  const server = new McpServer({ name: "shots", version: "1.0.0" });
  server.registerResource("page", "screenshot://page.png", {}, () => ({
    contents: [{ uri: "screenshot://page.png", mimeType: "image/png", blob: PNG }],
  }));
  // No type given (as a file server that does not guess one answers): its first bytes tell.
  server.registerResource("untyped", "file:///shot", {}, () => ({
    contents: [{ uri: "file:///shot", blob: PNG }],
  }));
  server.registerResource("zip", "file:///r.zip", {}, () => ({
    contents: [{ uri: "file:///r.zip", mimeType: "application/zip", blob: ZIP }],
  }));
  server.registerTool("snap", { annotations: { readOnlyHint: true } }, () => ({
    content: [
      { type: "text", text: "the page" },
      { type: "resource", resource: { uri: "file:///snap.png", mimeType: "image/png", blob: PNG } },
    ],
  }));
  server.registerPrompt("img", {}, () => ({
    messages: [
      {
        role: "user",
        content: { type: "resource", resource: { uri: "file:///p.png", mimeType: "image/png", blob: PNG } },
      },
    ],
  }));
  return server;
}

const CALLS = [
  { name: "mcp__shots__read_resource", args: { uri: "screenshot://page.png" } },
  { name: "mcp__shots__read_resource", args: { uri: "file:///shot" } },
  { name: "mcp__shots__read_resource", args: { uri: "file:///r.zip" } },
  { name: "mcp__shots__snap", args: {} },
  { name: "mcp__shots__get_prompt", args: { name: "img" } },
];

const perTest = gatewayPerTest();
let mcp: StatelessJsonMcp | undefined;
let telegram: FakeApi;

beforeAll(async () => {
  mcp = await serveStatelessJsonMcp(screenshots);
  telegram = await startFakeTelegram();
});
afterAll(async () => {
  await telegram?.close();
  await mcp?.close();
});

/** Runs route `r` once: the model's first turn makes `CALLS`, its second answers "done". */
async function run(provider: "openai" | "anthropic", model: FakeModel) {
  await perTest.start({
    config: webhookConfig(
      {
        r: {
          secret: "INSECURE_NO_AUTH",
          prompt: "look",
          deliver: "telegram",
          deliver_extra: { chat_id: "-7" },
        },
      },
      {},
      {
        agent: { provider, model: "m", base_url: model.baseUrl },
        mcp_servers: { shots: { url: mcp?.url, tools: { resources: true, prompts: true } } },
        platforms: { telegram: { enabled: true, token: "1:tg", base_url: telegram.url } },
      },
    ),
  });
  telegram.requests.length = 0;
  model.script({ toolCalls: CALLS }, { text: "done" });
  expect((await postJson(perTest.live().url("/webhooks/r"), {})).status).toBe(202);
  expect(await telegramMessages(telegram, 1)).toEqual(["done"]);
  return model.requests[1]?.json.messages as Array<{ role: string; content: unknown }>;
}

/** A Messages API tool result's image blocks (none in a result of text alone, sent as a string). */
const imagesOf = (content: unknown) =>
  typeof content === "string"
    ? []
    : (content as Array<{ type: string }>).filter((block) => block.type === "image");

const ANTHROPIC_IMAGE = { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } };

describe("an image held in a binary resource", () => {
  it("anthropic: reaches the model as an image, from read_resource, a tool's embedded resource and get_prompt; a zip keeps its line", async () => {
    const model = await startFakeAnthropic();
    try {
      const messages = await run("anthropic", model);
      const results = ((messages.at(-1)?.content ?? []) as Array<{ type: string; content: unknown }>).filter(
        (block) => block.type === "tool_result",
      );
      expect(results.map((result) => imagesOf(result.content))).toEqual([
        [ANTHROPIC_IMAGE],
        [ANTHROPIC_IMAGE],
        [],
        [ANTHROPIC_IMAGE],
        [ANTHROPIC_IMAGE],
      ]);
      // The zip is named, not shown: its result is text alone.
      expect(results[2]?.content).toContain(
        `[resource file:///r.zip: application/zip, ${Buffer.byteLength(ZIP, "base64")} bytes — not shown: tool results reach the model as text and images only]`,
      );
      expect(JSON.stringify(results[3]?.content)).toContain('"text":"the page"');
    } finally {
      await model.close();
    }
  });

  it("openai: is named as the line an image gets, the model's tool messages being text only", async () => {
    const model = await startFakeOpenAI();
    try {
      const messages = await run("openai", model);
      const results = messages.filter((m) => m.role === "tool").map((m) => String(m.content));
      const line = `[image: image/png, ${PNG_BYTES} bytes — not shown: this model endpoint takes text-only tool results]`;
      for (const i of [0, 1, 3, 4]) expect(results[i]).toContain(line);
      expect(results[2]).toContain("[resource file:///r.zip: application/zip,");
      expect(results.join("\n")).not.toContain(PNG.slice(0, 40));
    } finally {
      await model.close();
    }
  });
});
