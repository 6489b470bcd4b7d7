import { describe, expect, it } from "vitest";
import { stdioEntry, text, useHubs } from "./harness.js";

const ctx = useHubs();

/**
 * A call by the server's own name (`svc mcp call <server> a-b`) runs that tool or none: never another
 * tool registered under the same sanitized name (spec 2.5: `a.b`, `a-b` and `a_b` all register as `a_b`).
 */
describe("a call by a name that another tool registers as", () => {
  it("does not run the other tool when its own was filtered out", async () => {
    const h = ctx.hub(ctx.home, {
      fx: stdioEntry("legacy", { tools: { include: ["a.b"] } }, ["--twin-tools"]),
    });
    await h.settled("fx");
    expect(h.toolsOf("fx").map((t) => t.original)).toEqual(["a.b"]);
    await expect(h.call("fx", "a-b", {})).rejects.toThrow('mcp_servers.fx: no tool "a-b" is registered');
    await expect(h.call("fx", "a_b", {})).rejects.toThrow('mcp_servers.fx: no tool "a_b" is registered');
    expect(text(await h.call("fx", "a.b", {}))).toBe("ran a.b");
    expect(text(await h.call("fx", "mcp__fx__a_b", {}))).toBe("ran a.b");
  });

  it("does not run the collision's winner for a tool that lost the name", async () => {
    const h = ctx.hub(ctx.home, {
      fx: stdioEntry("legacy", { tools: { include: ["a?b"] } }, ["--twin-tools"]),
    });
    await h.settled("fx");
    expect(h.toolsOf("fx").map((t) => t.original)).toEqual(["a.b"]);
    await expect(h.call("fx", "a-b", {})).rejects.toThrow('no tool "a-b" is registered');
    await expect(h.call("fx", "a_b", {})).rejects.toThrow('no tool "a_b" is registered');
    expect(text(await h.call("fx", "mcp__fx__a_b", {}))).toBe("ran a.b");
  });

  it("the sanitized name of a registered tool still finds it when the server has no tool of that name", async () => {
    const h = ctx.hub(ctx.home, { fx: stdioEntry() });
    await h.settled("fx");
    expect(text(await h.call("fx", "write_note", { text: "x" }))).toBe("noted 1");
  });
});
