import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { buildServer } from "../../fixtures/mcp/server.mjs";
import { IN_MEMORY_ENTRY, inMemoryServers } from "../../helpers/inMemoryMcp.js";
import { entry, text, useHubs } from "../../integration/mcp/harness.js";

const ctx = useHubs();

/** Each utility tool answers with the server's result as JSON text: an object named by its list. */
describe("utility tool results (SDK server over InMemoryTransport)", () => {
  const transportFor = inMemoryServers(() => buildServer());

  it("list_prompts answers {prompts: [...]} as list_resources answers {resources, resourceTemplates}", async () => {
    const h = ctx.hub(
      ctx.home,
      { s: entry({ ...IN_MEMORY_ENTRY, tools: { resources: true, prompts: true } }) },
      { transportFor },
    );
    await h.settled("s");
    const prompts = JSON.parse(text(await h.call("s", "list_prompts", {})));
    expect(Object.keys(prompts)).toEqual(["prompts"]);
    expect(prompts.prompts.map((p: { name: string }) => p.name)).toEqual(["greet"]);
    const resources = JSON.parse(text(await h.call("s", "list_resources", {})));
    expect(Object.keys(resources)).toEqual(["resources", "resourceTemplates"]);
  });
});

/** get_prompt's arguments as a model writes them: MCP prompt arguments are strings. */
describe("get_prompt arguments (SDK server over InMemoryTransport)", () => {
  const transportFor = inMemoryServers(() => {
    const server = new McpServer({ name: "weather", version: "1.0.0" });
    // As server-everything's args-prompt: city required, state optional.
    server.registerPrompt(
      "forecast",
      { argsSchema: { city: z.string(), state: z.string().optional() } },
      ({ city, state }) => ({
        messages: [
          {
            role: "user",
            content: { type: "text", text: `Weather in ${city}${state ? `, ${state}` : ""}?` },
          },
        ],
      }),
    );
    return server;
  });
  const hub = () =>
    ctx.hub(ctx.home, { w: entry({ ...IN_MEMORY_ENTRY, tools: { prompts: true } }) }, { transportFor });
  const rendered = async (args: Record<string, unknown>) =>
    (
      JSON.parse(text(await hub().call("w", "get_prompt", { name: "forecast", arguments: args }))) as {
        messages: Array<{ content: { text: string } }>;
      }
    ).messages[0]?.content.text;

  it("a null value is an argument not given, never the text 'null'", async () => {
    expect(await rendered({ city: "Lyon", state: null })).toBe("Weather in Lyon?");
    await expect(
      hub().call("w", "get_prompt", { name: "forecast", arguments: { city: null } }),
    ).rejects.toThrow(/Invalid arguments for prompt forecast/);
  });

  it("a number is sent as its text, a string as it is", async () => {
    expect(await rendered({ city: 75001, state: "Île-de-France" })).toBe("Weather in 75001, Île-de-France?");
  });
});
