import { describe, expect, it } from "vitest";
import { fnmatchAny } from "../../../src/actors/mcp/fnmatch.js";

/** Python's fnmatchcase drops a set's reversed ranges; the rest of the set still matches. */
describe("a reversed range in a tools filter's set, as Python's fnmatchcase reads it", () => {
  it("is dropped from the set, which keeps its other members", () => {
    expect(fnmatchAny(["[a-cz-a]_tool"])("b_tool")).toBe(true);
    expect(fnmatchAny(["[a-cz-a]_tool"])("z_tool")).toBe(false);
  });
  it("leaves a set of nothing else matching nothing, and its complement any one character", () => {
    expect(fnmatchAny(["[z-a]_tool"])("b_tool")).toBe(false);
    expect(fnmatchAny(["[!z-a]_tool"])("q_tool")).toBe(true);
  });
});
