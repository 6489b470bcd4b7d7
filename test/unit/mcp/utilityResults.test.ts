import { describe, expect, it } from "vitest";
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
