import { describe, expect, it } from "vitest";
import { collectPairs } from "../../../src/cli/format.js";

describe("--deliver-extra key=value", () => {
  it("collects pairs (the value may hold '='); refuses a pair without a key and the key __proto__, which would vanish", () => {
    expect(collectPairs("b=x=y", collectPairs("a=1"))).toEqual({ a: "1", b: "x=y" });
    expect(() => collectPairs("=x")).toThrow('--deliver-extra: expected key=value, got "=x"');
    expect(() => collectPairs("__proto__=x")).toThrow('"__proto__" cannot be a deliver_extra key');
  });
});
