import { describe, expect, it } from "vitest";
import { collectPairs } from "../../../src/cli/format.js";

describe("--deliver-extra key=value", () => {
  it("collects pairs (the value may hold '='); refuses a pair without a key and the key __proto__, which would vanish", () => {
    expect(collectPairs("b=x=y", collectPairs("a=1"))).toEqual({ a: "1", b: "x=y" });
    expect(() => collectPairs("=x")).toThrow('--deliver-extra: expected key=value, got "=x"');
    expect(() => collectPairs("__proto__=x")).toThrow('"__proto__" cannot be a deliver_extra key');
  });

  it("refuses a key given twice (chat_id=1 then chat_id=2) rather than dropping its first value", () => {
    expect(() => collectPairs("chat_id=20002", collectPairs("chat_id=10001"))).toThrow(
      "--deliver-extra chat_id is given twice — deliver_extra holds one value per key: keep one",
    );
    expect(collectPairs("thread_id=7", collectPairs("chat_id=10001"))).toEqual({
      chat_id: "10001",
      thread_id: "7",
    });
  });
});
