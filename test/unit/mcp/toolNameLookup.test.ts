import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { describe, expect, it } from "vitest";
import { buildServer } from "../../fixtures/mcp/server.mjs";
import { IN_MEMORY_ENTRY, inMemoryServers } from "../../helpers/inMemoryMcp.js";
import { entry, text, useHubs } from "../../integration/mcp/harness.js";

const ctx = useHubs();

/** The fixture server plus tools named `names`, each answering `ran <name>`. */
function withTools(names: readonly string[]): () => McpServer {
  return () => {
    const server = buildServer();
    for (const name of names)
      server.registerTool(name, {}, () => ({ content: [{ type: "text", text: `ran ${name}` }] }));
    return server;
  };
}

const fixture = (extra: Record<string, unknown> = {}) => entry({ ...IN_MEMORY_ENTRY, ...extra });
/** "a.b", "a-b" and "a_b": tools whose names all register as "a_b". */
const twins = inMemoryServers(withTools(["a.b", "a-b", "a_b"]));

/**
 * A call by the server's own name (`svc mcp call <server> a-b`) runs that tool or none: never another
 * tool registered under the same sanitized name (`a.b`, `a-b` and `a_b` all register as `a_b`).
 */
describe("a call by a name that another tool registers as (SDK server over InMemoryTransport)", () => {
  it("does not run the other tool when its own was filtered out", async () => {
    const h = ctx.hub(ctx.home, { fx: fixture({ tools: { include: ["a.b"] } }) }, { transportFor: twins });
    await h.settled("fx");
    expect(h.toolsOf("fx").map((t) => t.original)).toEqual(["a.b"]);
    await expect(h.call("fx", "a-b", {})).rejects.toThrow('mcp_servers.fx: no tool "a-b" is registered');
    await expect(h.call("fx", "a_b", {})).rejects.toThrow('mcp_servers.fx: no tool "a_b" is registered');
    expect(text(await h.call("fx", "a.b", {}))).toBe("ran a.b");
    expect(text(await h.call("fx", "mcp__fx__a_b", {}))).toBe("ran a.b");
  });

  it("does not run the collision's winner for a tool that lost the name", async () => {
    const h = ctx.hub(ctx.home, { fx: fixture({ tools: { include: ["a?b"] } }) }, { transportFor: twins });
    await h.settled("fx");
    expect(h.toolsOf("fx").map((t) => t.original)).toEqual(["a.b"]);
    await expect(h.call("fx", "a-b", {})).rejects.toThrow('no tool "a-b" is registered');
    await expect(h.call("fx", "a_b", {})).rejects.toThrow('no tool "a_b" is registered');
    expect(text(await h.call("fx", "mcp__fx__a_b", {}))).toBe("ran a.b");
  });

  it("the sanitized name of a registered tool still finds it when the server has no tool of that name", async () => {
    const h = ctx.hub(ctx.home, { fx: fixture() }, { transportFor: inMemoryServers(() => buildServer()) });
    await h.settled("fx");
    expect(text(await h.call("fx", "write_note", { text: "x" }))).toMatch(/^noted \d+$/);
  });
});

/** A server's own tool named like a utility tool (`list_resources`, `get-prompt`) keeps the name. */
describe("a server tool named like a utility tool (SDK server over InMemoryTransport)", () => {
  it("keeps the name, and the collision says the skipped one is the utility tool", async () => {
    const h = ctx.hub(
      ctx.home,
      {
        fx: fixture({ tools: { include: ["list_resources", "get-prompt"], resources: true, prompts: true } }),
      },
      { transportFor: inMemoryServers(withTools(["list_resources", "get-prompt"])) },
    );
    expect((await h.settled("fx")).collisions).toEqual([
      'fx: the utility tool list_resources and the server\'s tool "list_resources" both register as mcp__fx__list_resources; the utility tool list_resources is skipped',
      'fx: the utility tool get_prompt and the server\'s tool "get-prompt" both register as mcp__fx__get_prompt; the utility tool get_prompt is skipped',
    ]);
    expect(text(await h.call("fx", "mcp__fx__list_resources", {}))).toBe("ran list_resources");
    expect(h.toolsOf("fx").map((t) => `${t.kind} ${t.original}`)).toEqual([
      "native list_resources",
      "native get-prompt",
      "utility read_resource",
      "utility list_prompts",
    ]);
  });
});

describe("a call by the name of a utility tool that lost its name to a server tool (SDK server over InMemoryTransport)", () => {
  it("does not run the server's tool (get-prompt for get_prompt), and says the utility tool lost a collision", async () => {
    const h = ctx.hub(
      ctx.home,
      { fx: fixture({ tools: { include: ["get-prompt"], prompts: true } }) },
      { transportFor: inMemoryServers(withTools(["get-prompt"])) },
    );
    await h.settled("fx");
    await expect(h.call("fx", "get_prompt", { name: "greet", arguments: { who: "Ann" } })).rejects.toThrow(
      'mcp_servers.fx: no tool "get_prompt" is registered — it lost a name collision: the utility tool get_prompt and the server\'s tool "get-prompt" both register as mcp__fx__get_prompt; the utility tool get_prompt is skipped',
    );
    // The server's tool by its own name or its registered name; the other utility tool as usual.
    expect(text(await h.call("fx", "get-prompt", {}))).toBe("ran get-prompt");
    expect(text(await h.call("fx", "mcp__fx__get_prompt", {}))).toBe("ran get-prompt");
    expect(JSON.parse(text(await h.call("fx", "list_prompts", {})))).toMatchObject({
      prompts: [{ name: "greet" }],
    });
  });
});

/** Server names Object.prototype also carries (`constructor`, `toString`) are ordinary names. */
describe("MCP servers named like Object.prototype members (SDK server over InMemoryTransport)", () => {
  it("connect, answer calls, and are removed (disconnected) when a reload drops them", async () => {
    const transportFor = inMemoryServers(() => buildServer());
    const h = ctx.hub(ctx.home, { constructor: fixture(), toString: fixture() }, { transportFor });
    await Promise.all(["constructor", "toString"].map((s) => h.settled(s)));
    expect(text(await h.call("constructor", "echo", { text: "hi" }))).toBe("hi");
    const summary = await h.reload({ toString: fixture() });
    expect(summary).toEqual({
      added: [],
      removed: ["constructor"],
      changed: [],
      disabled: [],
      enabled: [],
      unchanged: ["toString"],
      retried: [],
      started: [],
    });
    expect(h.status().map((s) => s.name)).toEqual(["toString"]);
  });
});
