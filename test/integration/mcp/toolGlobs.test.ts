import { describe, expect, it } from "vitest";
import { stdioEntry, useHubs } from "./harness.js";

const ctx = useHubs();

const originals = (tools: Array<{ original: string }>) => tools.map((t) => t.original).sort();

/** Spec 2.2: include/exclude take "exact names or fnmatch-style globs" against the server's own names. */
describe("fnmatch globs in tools.include / tools.exclude (real stdio server)", () => {
  it("[!...] is a complement set, ? one character, [..] a set, * crosses dots; matching is case-sensitive", async () => {
    const h = ctx.hub(ctx.home, {
      notS: stdioEntry("legacy", { tools: { include: "[!aefpsw]*" } }),
      exNotE: stdioEntry("legacy", { tools: { exclude: ["[!e]*"] } }),
      sets: stdioEntry("legacy", { tools: { include: ["?cho", "[ap]*", "*.ro", "ECHO"] } }),
    });
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
    const h = ctx.hub(ctx.home, { s: stdioEntry("legacy", { tools: { include: "[!s]*" } }) });
    await h.settled("s");
    const names = originals(h.toolsOf("s"));
    expect(names).toContain("echo");
    expect(names.some((n) => n.startsWith("s"))).toBe(false);
  });
});
