import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { lookupPath, valueToText } from "../../../src/streams/payloadPath.js";

describe("lookupPath", () => {
  const root = { a: { b: { c: 0 } }, list: [{ id: "x" }, null], nil: null, "dotted-key": 1 };

  it("walks nested objects and array indexes, naming the holder and key of the value found", () => {
    expect(lookupPath(root, "a.b.c")).toEqual({ found: true, value: 0, holder: root.a.b, key: "c" });
    expect(lookupPath(root, "list.0.id")).toMatchObject({ found: true, value: "x", key: "id" });
    expect(lookupPath(root, "list.1")).toEqual({ found: true, value: null, holder: root.list, key: "1" });
    expect(lookupPath(root, "nil")).toMatchObject({ found: true, value: null });
    expect(lookupPath(root, "dotted-key")).toMatchObject({ found: true, value: 1 });
  });

  it("does not find absent keys, bad indexes, empty segments or paths through scalars", () => {
    for (const path of [
      "",
      "a.x",
      "list.2",
      "list.-1",
      "list.01",
      "list.id",
      "a..b",
      ".a",
      "a.",
      "nil.x",
      "a.b.c.d",
    ]) {
      expect(lookupPath(root, path)).toEqual({ found: false });
    }
  });

  it("never walks into inherited properties", () => {
    for (const path of ["constructor", "__proto__", "toString", "a.hasOwnProperty", "list.length"]) {
      expect(lookupPath(root, path)).toEqual({ found: false });
    }
  });

  it("finds every key of an arbitrary object it was given", () => {
    fc.assert(
      fc.property(
        fc.dictionary(
          fc.string({ minLength: 1 }).filter((k) => !k.includes(".")),
          fc.jsonValue(),
        ),
        (obj) => {
          for (const [key, value] of Object.entries(obj))
            expect(lookupPath(obj, key)).toEqual({ found: true, value, holder: obj, key });
        },
      ),
    );
  });
});

describe("valueToText", () => {
  it("keeps strings and renders everything else as compact JSON", () => {
    expect(valueToText("a b")).toBe("a b");
    expect(valueToText(42)).toBe("42");
    expect(valueToText(true)).toBe("true");
    expect(valueToText(null)).toBe("null");
    expect(valueToText({ a: [1, 2] })).toBe('{"a":[1,2]}');
  });
});
