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
