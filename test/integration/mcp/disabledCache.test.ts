import { describe, expect, it } from "vitest";
import { stdioEntry, useHubs } from "./harness.js";

const ctx = useHubs();

describe("a disabled server with a schema cache from an earlier connect", () => {
  it("is shown as cached, and registers none of the cached tools", async () => {
    const first = ctx.hub(ctx.home, { fx: stdioEntry("legacy") });
    expect((await first.settled("fx")).state).toBe("connected");
    await first.stop();
    const h = ctx.hub(ctx.home, { fx: stdioEntry("legacy", { enabled: false }) });
    expect(await h.settled("fx")).toMatchObject({ state: "disabled", cached: true, toolCount: 0 });
    expect(h.tools()).toEqual([]);
  });
});
