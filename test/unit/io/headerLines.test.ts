import { describe, expect, it } from "vitest";
import { addHeaderLine } from "../../../src/io/http/core.js";

const collect = (lines: ReadonlyArray<readonly [string, string]>) => {
  const headers: Record<string, string> = {};
  for (const [name, value] of lines) addHeaderLine(headers, name, value);
  return headers;
};

describe("addHeaderLine (how both servers read repeated header lines)", () => {
  it("joins different values with ', ' and drops a line repeating a value already there", () => {
    expect(
      collect([
        ["x-github-event", "push"],
        ["x-github-event", "push"],
        ["accept", "a"],
        ["accept", "b"],
        ["accept", "a"],
        ["accept", "c"],
        ["accept", "b"],
      ]),
    ).toEqual({ "x-github-event": "push", accept: "a, b, c" });
  });

  it("an empty line next to one with a value adds nothing (RFC 9110: empty list elements are ignored)", () => {
    expect(
      collect([
        ["x-github-delivery", ""],
        ["x-github-delivery", "abc"],
        ["x-github-event", "push"],
        ["x-github-event", ""],
        ["accept", "a"],
        ["accept", ""],
        ["accept", "b"],
        ["x-empty", ""],
        ["x-empty", ""],
      ]),
    ).toEqual({ "x-github-delivery": "abc", "x-github-event": "push", accept: "a, b", "x-empty": "" });
    // Framing headers stay joined: an empty Content-Length next to another is still ambiguous.
    expect(
      collect([
        ["content-length", ""],
        ["content-length", "2"],
      ]),
    ).toEqual({ "content-length": ", 2" });
  });

  it("always joins Content-Length, so two of them stay visible as ambiguous framing", () => {
    expect(
      collect([
        ["content-length", "2"],
        ["content-length", "2"],
      ]),
    ).toEqual({ "content-length": "2, 2" });
  });

  it("header names that are Object.prototype members are plain headers", () => {
    const headers = collect([
      ["constructor", "a"],
      ["tostring", "b"],
      ["hasOwnProperty", "c"],
    ]);
    expect(headers).toEqual({ constructor: "a", tostring: "b", hasOwnProperty: "c" });
    expect(collect([["valueOf", "v"]]).valueOf).toBe("v");
  });
});
