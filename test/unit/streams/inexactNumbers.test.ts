import { describe, expect, it } from "vitest";
import { inexactNumber, inexactToken } from "../../../src/streams/jsonNumbers/inexact.js";

/**
 * Which numbers a tool call's arguments may not hold (docs/agent.md, Malformed tool calls): a whole number
 * written in digits that a double sends as another one (an id past 2^53), and a number out of a double's
 * range. A fraction, or a number written with an exponent, is rounded to the nearest double as `0.1` is.
 */
describe("inexactToken", () => {
  it.each([
    "0.1",
    "1.0",
    "1e3",
    "-0",
    "-0.0",
    "0e5",
    // Fractions with more digits than a double keeps: the nearest double, as 0.1 gets.
    "0.10000000000000001",
    "3.14159265358979323846",
    "0.12345678901234567",
    "1234567890123456789.5",
    // Within the range, however small or large.
    "2.5e-324",
    "5e-324",
    "1.7976931348623157e308",
    "1e300",
    // Written with an exponent: a double's rounding.
    "1.5e300",
    "9.007199254740993e15",
    // Whole numbers a double sends as written.
    "9007199254740992",
    "1234567890123456800",
    "100000000000000000000000",
  ])("passes %s", (token) => {
    expect(inexactToken(token)).toBe(false);
  });

  it.each([
    "1234567890123456789",
    "-1234567890123456789",
    "1234567890123456789.0",
    "9007199254740993",
    "123456789012345678901234567890",
    // Out of a double's range: Infinity, or 0 for a number that is not zero.
    "1e400",
    "-1.0e400",
    "1.7976931348623159e308",
    "1e-400",
  ])("refuses %s", (token) => {
    expect(inexactToken(token)).toBe(true);
  });

  it("inexactNumber finds the first refused number outside strings", () => {
    expect(inexactNumber('{"a": 0.10000000000000001, "b": "1234567890123456789", "c": [2.5e-324]}')).toBe(
      undefined,
    );
    expect(inexactNumber('{"a": 0.10000000000000001, "b": [1e-400, 1234567890123456789]}')).toBe("1e-400");
  });
});
