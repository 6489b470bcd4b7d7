import { describe, expect, it } from "vitest";
import { headerField } from "../../../src/io/http/headerField.js";

describe("headerField (a header line of a head node's parser refused)", () => {
  it("reads the name and the value without the spaces and tabs around it", () => {
    expect(headerField("X-GitHub-Delivery: abc")).toEqual(["X-GitHub-Delivery", "abc"]);
    expect(headerField("X-Team:\t l'équipe  ünie \t ")).toEqual(["X-Team", "l'équipe  ünie"]);
    expect(headerField("Empty:")).toEqual(["Empty", ""]);
    expect(headerField("Blank:   ")).toEqual(["Blank", ""]);
  });

  it("leaves out a line with no colon, a name that is no token, and a value holding a line break", () => {
    expect(headerField(" folded value")).toBeUndefined();
    expect(headerField(": no name")).toBeUndefined();
    expect(headerField("Bad Name: x")).toBeUndefined();
    expect(headerField("X-A: a\nb")).toBeUndefined();
  });

  it("reads a value with a 120 000-space run inside in one pass (a backtracking pattern took tens of seconds)", () => {
    const pad = " ".repeat(120_000);
    expect(headerField(`X-Pad: a${pad}b${pad}`)).toEqual(["X-Pad", `a${pad}b`]);
  });
});
