import { describe, expect, it } from "vitest";
import { stdioEntry, text, useHubs } from "./harness.js";

/** Server names Object.prototype also carries (`constructor`, `toString`) are ordinary names. */

const ctx = useHubs();

describe("MCP servers named like Object.prototype members", () => {
  it("connect, answer calls, and are removed (disconnected) when a reload drops them", async () => {
    const h = ctx.hub(ctx.home, { constructor: stdioEntry(), toString: stdioEntry() });
    await Promise.all(["constructor", "toString"].map((s) => h.settled(s)));
    expect(text(await h.call("constructor", "echo", { text: "hi" }))).toBe("hi");
    const summary = await h.reload({ toString: stdioEntry() });
    expect(summary).toEqual({ added: [], removed: ["constructor"], changed: [], unchanged: ["toString"] });
    expect(h.status().map((s) => s.name)).toEqual(["toString"]);
  });
});
