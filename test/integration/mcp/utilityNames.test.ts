import { describe, expect, it } from "vitest";
import { stdioEntry, text, useHubs } from "./harness.js";

const ctx = useHubs();

/** A server's own tool named like a utility tool (`list_resources`, `get-prompt`) keeps the name (spec 2.5). */
describe("a server tool named like a utility tool", () => {
  it("keeps the name, and the collision says the skipped one is the utility tool", async () => {
    const h = ctx.hub(ctx.home, {
      fx: stdioEntry(
        "legacy",
        { tools: { include: ["list_resources", "get-prompt"], resources: true, prompts: true } },
        ["--utility-names"],
      ),
    });
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
