import fc from "fast-check";
import { describe, expect, it } from "vitest";
import * as now from "../../../src/streams/jsonNumbers/index.js";
import * as before from "./jsonNumbersBefore.js";

type Impl = typeof now;

/** Number texts that print back as written and ones that do not: 1.0, exponents, -0, ids past 2^53. */
const numberText = fc.oneof(
  fc.constantFrom(
    "0",
    "-0",
    "0.0",
    "-0.0",
    "1.0",
    "1.50",
    "2.5",
    "0.1",
    "1e3",
    "1E3",
    "1e+2",
    "1.0e-7",
    "1e21",
    "1e+21",
    "1e400",
    "-1e400",
    "12345678901234567890",
    "9007199254740993",
    "9007199254740992",
    "123456789012345",
    "1234567890123456",
    "-42",
    "100",
  ),
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n)),
  fc.tuple(fc.nat(99999), fc.nat(999)).map(([a, b]) => `${a}.${b}0`),
);

/** Keys JavaScript lists out of the written order (array indices), escaped ones, prototype names. */
const key = fc.oneof(
  fc.constantFrom(
    "a",
    "b",
    "n",
    "0",
    "1",
    "2",
    "10",
    "01",
    "4294967294",
    "4294967295",
    "12345678901",
    "__proto__",
    "constructor",
    "toString",
    "\\u0031",
    "1\\u0030",
    "\\u0061",
    'x\\"y',
    "1.3",
    "-1",
  ),
  fc.nat(30).map(String),
  fc.string({ maxLength: 4 }).map((s) => JSON.stringify(s).slice(1, -1)),
);

/** String values with digits, brackets, quotes and backslashes inside, which are not numbers or nesting. */
const stringText = fc.oneof(
  fc.constantFrom(
    '"1.0"',
    '"\\"n\\": 1.0"',
    '"[{1.0}]"',
    '"\\\\"',
    '"\\\\\\""',
    '"12:30"',
    '"\\u0031"',
    '""',
  ),
  fc.string({ maxLength: 6 }).map((s) => JSON.stringify(s)),
);

const ws = fc.constantFrom("", "", "", " ", "\n  ", "\t");

const { value: jsonText } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    numberText,
    stringText,
    fc.constantFrom("true", "false", "null"),
    tie("array"),
    tie("object"),
  ),
  array: fc
    .tuple(fc.array(fc.tuple(ws, tie("value") as fc.Arbitrary<string>, ws), { maxLength: 6 }))
    .map(([items]) => `[${items.map(([a, v, b]) => a + v + b).join(",")}]`),
  object: fc
    .array(fc.tuple(key, ws, tie("value") as fc.Arbitrary<string>), { maxLength: 6 })
    .chain((members) =>
      // Repeat some keys: JSON.parse keeps the last value, at the first key's place.
      fc.subarray(members).map((again) => [...members, ...again]),
    )
    .map((members) => `{${members.map(([k, s, v]) => `"${k}"${s}:${s}${v}`).join(",")}}`),
})) as { value: fc.Arbitrary<string> };

const bodyText = fc.oneof(
  jsonText,
  fc
    .array(fc.tuple(key, jsonText), { maxLength: 5 })
    .map((m) => `{${m.map(([k, v]) => `"${k}":${v}`).join(",")}}`),
);

/** Everything the rest of svc reads of a parsed body, as text: dumps, heads, number texts, extended copies. */
function outputs(impl: Impl, text: string): unknown[] {
  let parsed: unknown;
  try {
    parsed = impl.parseJson(text);
  } catch (err) {
    return [`threw ${(err as Error).constructor.name}`];
  }
  const out: unknown[] = [impl.stringifyJson(parsed), impl.stringifyJson(parsed, 2)];
  for (const indent of [1, 4, 12, -1, 0.5]) out.push(impl.stringifyJson(parsed, indent));
  // A head is read only as far as its limit (the rest may differ: the new one cuts long strings and keys).
  for (const limit of [0, 7, 40, 400])
    out.push([...(impl.stringifyJsonHead(parsed, 2, limit) ?? "")].slice(0, limit).join(""));
  const visit = (node: unknown): void => {
    if (typeof node !== "object" || node === null) return;
    out.push(impl.stringifyJson(node), impl.stringifyJson(node, 3));
    for (const k of Object.keys(node)) {
      const item = (node as Record<string, unknown>)[k];
      if (typeof item === "number") out.push(`${k}=${impl.numberText(node, k, item)}`);
      visit(item);
    }
  };
  visit(parsed);
  if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) {
    const extended = impl.extendObject(parsed as Record<string, unknown>, {
      script_output: "x",
      2: "y",
      a: 1,
    });
    out.push(
      impl.stringifyJson(extended),
      impl.numberText(extended, "n", 0),
      impl.numberText(extended, "0", 0),
    );
  }
  return out;
}

describe("the number-keeping parse gives the same text as before its walk was rewritten", () => {
  it("on generated bodies: nesting, floats, exponents, -0, big ints, digit and escaped keys, repeated keys", () => {
    fc.assert(
      fc.property(bodyText, (text) => {
        expect(outputs(now, text)).toEqual(outputs(before, text));
      }),
      { numRuns: 3000 },
    );
  });

  it("on the documented examples and large bodies", () => {
    const bodies = [
      '{"amount": 1.0, "big": 12345678901234567890, "exp": 1E3, "neg": -0, "nested": {"list": [1.50, 7]}}',
      '{"id": "17", "2": "x", "1.3": "Ada", "10": "x", "answers": {"q": "why", "7": 1.0, "3": [{"z": 1, "0": 2}]}}',
      '{"a": {"x": 1.0}, "a": {"x": 2, "y": 3.0}, "b": 1.0, "b": 1, "c": "s", "c": 2.50}',
      '{"o": {"2": 1, "b": 1}, "o": {"b": 2, "2": 2}, "p": {"b": 1, "2": 1}, "p": {"2": 2, "b": 2}}',
      '{"meta": {"x": [1.0]}, "meta": "plain", "list": [{"k": [2.0]}, 3], "list": [{"k": 7}, 1.0], "o": {"constructor": {"n": 1.0}}, "o": {}}',
      `{"a":[${Array.from({ length: 2000 }, (_, i) => `{"x":${i}.0,"${i % 5}":1}`).join(",")}]}`,
      `{"a":[${Array.from({ length: 3000 }, (_, i) => `${i}.0`).join(",")}]}`,
      `{${Array.from({ length: 3000 }, (_, i) => `"${3000 - i}":1.0`).join(",")}}`,
      `{"deep":${"[".repeat(400)}1.0${"]".repeat(400)}}`,
      // Objects out of JavaScript's key order inside each other (their keys listed from the walk), with
      // repeated keys whose earlier value is stepped over unread.
      // (Small: the walk before this rewrite read each level's text again, quadratic in the depth.)
      `{"a":[${Array(3)
        .fill(`${'{"b":1.0,"0":'.repeat(60)}1${"}".repeat(60)}`)
        .join(",")}]}`,
      `{"x":${'{"1":{"q":1},"1":2.0,"b":[1.0],"0":'.repeat(40)}{}${"}".repeat(40)},"2":1}`,
    ];
    for (const text of bodies) expect(outputs(now, text)).toEqual(outputs(before, text));
  });
});
