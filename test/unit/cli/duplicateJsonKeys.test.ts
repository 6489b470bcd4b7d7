import { describe, expect, it } from "vitest";
import { duplicateJsonKeys } from "../../../src/cli/mcp/duplicateJsonKeys.js";

describe("duplicateJsonKeys: keys JSON.parse would keep only the last of", () => {
  it("names each key written twice in one object by its path, once, in the order of its second writing", () => {
    const text = `{"s": {"b": [1, {"k": "x", "k": "y"}], "a\\"q": 1, "a\\u0022q": 2, "a": {"n": null}, "a": 3, "a": 4},
      "t": ["a", "a"], "s": {}}`;
    expect(duplicateJsonKeys(text)).toEqual([["s", "b", "1", "k"], ["s", 'a"q'], ["s", "a"], ["s"]]);
  });

  it("finds none where each object's keys differ (the same key in two objects is no duplicate)", () => {
    expect(duplicateJsonKeys(`{"a": {"x": 1}, "b": {"x": [true, false, -1.5e3, "}"]}}`)).toEqual([]);
  });
});
