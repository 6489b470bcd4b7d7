import { describe, expect, it } from "vitest";
import { LooseCallToolResultSchema } from "../../../src/io/mcp/looseAnswers.js";
import { MAX_RESULT_DEPTH, ResultTooDeepError } from "../../../src/io/mcp/resultDepth.js";

/** A tool result nesting `depth` levels, the result object itself the first: structuredContent holds the rest. */
function resultOfDepth(depth: number): Record<string, unknown> {
  let structured: Record<string, unknown> = {};
  for (let level = 2; level < depth; level++) structured = { a: structured };
  return { content: [], structuredContent: structured };
}

describe("the tool result depth limit (docs/mcp.md, Tool calls)", () => {
  it("is the webhook payload's: 512 levels", () => {
    expect(MAX_RESULT_DEPTH).toBe(512);
  });

  it("reads a result exactly 512 levels deep", () => {
    expect(LooseCallToolResultSchema.parse(resultOfDepth(512))).toHaveProperty("structuredContent");
  });

  it("refuses one 513 levels deep, and one 100 000 deep, without walking it recursively", () => {
    for (const depth of [513, 100_000])
      expect(() => LooseCallToolResultSchema.parse(resultOfDepth(depth))).toThrow(new ResultTooDeepError());
  });

  it("counts a content block's nesting as the result's", () => {
    let meta: unknown = {};
    for (let i = 0; i < 600; i++) meta = { a: meta };
    expect(() =>
      LooseCallToolResultSchema.parse({ content: [{ type: "text", text: "x", _meta: meta }] }),
    ).toThrow(ResultTooDeepError);
  });
});
