import { describe, expect, it } from "vitest";
import { jsonErrorLocation } from "../../../src/io/jsonErrorLocation.js";

/** The location JSON.parse's error points at in `text`. */
function locate(text: string): { line: number; column: number } {
  try {
    JSON.parse(text);
  } catch (err) {
    return jsonErrorLocation(text, err);
  }
  throw new Error("the text parsed");
}

describe("jsonErrorLocation: where a hand-edited JSON file is broken", () => {
  it.each([
    ["a trailing comma (an error with a position)", '{\n  "a": 1,\n}', { line: 3, column: 1 }],
    ["a missing colon", '{\n  "a" 1\n}', { line: 2, column: 7 }],
    [
      "an unquoted value (an unexpected token: no position in the message)",
      '{\n  "a": x\n}',
      { line: 2, column: 8 },
    ],
    ["an unexpected token on the first line", '{"a": TOP}', { line: 1, column: 7 }],
    ["a misspelt literal", '{"a": trux}', { line: 1, column: 10 }],
    ["a cut-off file: the end of the text", '{\n  "a": {\n', { line: 3, column: 1 }],
    ["a cut-off literal", '{"a": tr', { line: 1, column: 9 }],
  ])("%s", (_what, text, where) => {
    expect(locate(text)).toEqual(where);
  });
});
