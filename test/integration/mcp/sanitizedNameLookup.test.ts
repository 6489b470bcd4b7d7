import { describe, expect, it } from "vitest";
import { stdioEntry, text, useHubs } from "./harness.js";

const ctx = useHubs();

/**
 * A call by the server's own name (`svc mcp call <server> a-b`) runs that tool or none: never the other
 * tool that registers under the same sanitized name (spec 2.5: `a.b` and `a-b` are both `a_b`).
 */
describe("a call by a name that sanitizes to another tool's registered name", () => {
  it("does not run the other tool when its own was filtered out", async () => {
    const h = ctx.hub(ctx.home, {
      fx: stdioEntry("legacy", { tools: { include: ["a.b"] } }, ["--twin-tools"]),
    });
    await h.settled("fx");
    expect(h.toolsOf("fx").map((t) => t.original)).toEqual(["a.b"]);
    await expect(h.call("fx", "a-b", {})).rejects.toThrow('mcp_servers.fx: no tool "a-b" is registered');
    expect(text(await h.call("fx", "a.b", {}))).toBe("ran a.b");
  });

  it("does not run the collision's winner for the skipped tool; the sanitized name still finds the winner", async () => {
    const h = ctx.hub(ctx.home, {
      fx: stdioEntry("legacy", { tools: { include: ["a?b"] } }, ["--twin-tools"]),
    });
    await h.settled("fx");
    expect(h.toolsOf("fx").map((t) => t.original)).toEqual(["a.b"]);
    await expect(h.call("fx", "a-b", {})).rejects.toThrow('no tool "a-b" is registered');
    expect(text(await h.call("fx", "a_b", {}))).toBe("ran a.b");
    expect(text(await h.call("fx", "mcp__fx__a_b", {}))).toBe("ran a.b");
  });
});
