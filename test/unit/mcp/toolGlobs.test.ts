import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { buildServer } from "../../fixtures/mcp/server.mjs";
import { IN_MEMORY_ENTRY, inMemoryServers } from "../../helpers/inMemoryMcp.js";
import { entry, useHubs } from "../../integration/mcp/harness.js";

const ctx = useHubs();

const originals = (tools: Array<{ original: string }>) => tools.map((t) => t.original).sort();
const fixture = (tools: Record<string, unknown>) => entry({ ...IN_MEMORY_ENTRY, tools });

/** include/exclude take exact names or fnmatch-style globs against the server's own names. */
describe("fnmatch globs in tools.include / tools.exclude (SDK server over InMemoryTransport)", () => {
  const transportFor = inMemoryServers({
    notS: () => buildServer(),
    exNotE: () => buildServer(),
    sets: () => buildServer(),
    s: () => buildServer(),
  });

  it("[!...] is a complement set, ? one character, [..] a set, * crosses dots; matching is case-sensitive", async () => {
    const h = ctx.hub(
      ctx.home,
      {
        notS: fixture({ include: "[!aefpsw]*" }),
        exNotE: fixture({ exclude: ["[!e]*"] }),
        sets: fixture({ include: ["?cho", "[ap]*", "*.ro", "ECHO"] }),
      },
      { transportFor },
    );
    await Promise.all(["notS", "exNotE", "sets"].map((s) => h.settled(s)));
    // Tools of the fixture: echo add write-note snake.ro slow fail env pid sample ask ask-url add-tool.
    expect(originals(h.toolsOf("notS"))).toEqual([]);
    expect(originals(h.toolsOf("exNotE"))).toEqual(["echo", "env"]);
    expect(originals(h.toolsOf("sets"))).toEqual([
      "add",
      "add-tool",
      "ask",
      "ask-url",
      "echo",
      "pid",
      "snake.ro",
    ]);
  });

  it("a set that excludes only some first letters keeps the rest", async () => {
    const h = ctx.hub(ctx.home, { s: fixture({ include: "[!s]*" }) }, { transportFor });
    await h.settled("s");
    const names = originals(h.toolsOf("s"));
    expect(names).toContain("echo");
    expect(names.some((n) => n.startsWith("s"))).toBe(false);
  });
});

/**
 * A tool name is the server's text: one thousands of characters long must not make a glob of the
 * operator's (several `*` with text between them) take ages to judge. Compiled to a backtracking RegExp,
 * `*a*a*a*a*a*z` against 4000 `a`s tried about 10^16 ways and held the gateway's event loop (every route,
 * every server) for what would have been days; the match is now linear in the name per pattern character.
 */
describe("a glob against a very long tool name a server lists", () => {
  const long = "a".repeat(4000);
  const transportFor = inMemoryServers(() => {
    const server = new Server({ name: "long-names", version: "1.0.0" }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [long, "keep", `${long}z`].map((name) => ({ name, inputSchema: { type: "object" as const } })),
    }));
    return server;
  });

  it("is judged at once: include and exclude register what the globs say", async () => {
    const h = ctx.hub(
      ctx.home,
      {
        inc: fixture({ include: ["*a*a*a*a*a*z", "keep"] }),
        exc: fixture({ exclude: ["*a*a*a*a*a*z", "*[!a]a*a*a*"] }),
      },
      { transportFor },
    );
    await Promise.all(["inc", "exc"].map((s) => h.settled(s)));
    expect(originals(h.toolsOf("inc"))).toEqual(["keep", `${long}z`].sort());
    expect(originals(h.toolsOf("exc"))).toEqual([long, "keep"].sort());
  });
});
