import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { resolveField } from "../../../src/streams/filters.js";
import {
  ALTERED_NUMBERS,
  DIGIT_KEYS,
  extendObject,
  numberText,
  parseJson,
  scanJsonText,
  stringifyJson,
  stringifyJsonHead,
} from "../../../src/streams/jsonNumbers/index.js";
import { foundText, type PathLookup } from "../../../src/streams/payloadPath.js";
import { renderTemplate } from "../../../src/streams/template.js";

describe("numbers keep the text the sender wrote (spec 2.5 rule 1: the payload value)", () => {
  const body =
    '{"amount": 1.0, "big": 12345678901234567890, "exp": 1E3, "neg": -0, "ok": 42, "f": 2.5,' +
    ' "nested": {"list": [1.50, 7, {"x": 9007199254740993}]}, "s": "1.0 in a string"}';

  it("finds numbers that JavaScript would print differently, and ignores digits inside strings", () => {
    const hasAlteredNumbers = (text: string) => (scanJsonText(text, 512) & ALTERED_NUMBERS) !== 0;
    expect(hasAlteredNumbers('{"a": 1, "b": 2.5, "c": -3, "d": "1.0", "e": 123456789012345}')).toBe(false);
    for (const altered of ["1.0", "1E3", "-0", "12345678901234567890", "1.50", "0.10", "1e+2"]) {
      expect(hasAlteredNumbers(`{"a": [true, null, ${altered}]}`), altered).toBe(true);
    }
  });

  it("templates render scalars as sent: 1.0, 1E3, -0, integers past 2^53", () => {
    const payload = parseJson(body);
    expect(
      renderTemplate("{amount}|{big}|{exp}|{neg}|{ok}|{f}|{nested.list.0}|{nested.list.2.x}", payload),
    ).toBe("1.0|12345678901234567890|1E3|-0|42|2.5|1.50|9007199254740993");
  });

  it("nested values and {__raw__} serialize those numbers as sent; everything else as JSON.stringify", () => {
    const payload = parseJson(body);
    expect(renderTemplate("{nested}", payload)).toBe('{"list":[1.50,7,{"x":9007199254740993}]}');
    const raw = renderTemplate("{__raw__}", payload);
    expect(raw).toContain('"amount": 1.0,');
    expect(raw).toContain('"big": 12345678901234567890,');
    expect(raw).toContain('"s": "1.0 in a string"');
    expect(JSON.parse(raw)).toEqual(JSON.parse(body));
  });

  it("payload text shaped like the internal marker cannot inject a number", () => {
    const payload = parseJson('{"n": 1.0, "t": ":0", "u": "0"}');
    expect(stringifyJson(payload)).toBe('{"n":1.0,"t":":0","u":"0"}');
  });

  it("a repeated key: the kept (last) value's text, never an earlier occurrence's", () => {
    const payload = parseJson(
      '{"a": {"x": 1.0}, "a": {"x": 2, "y": 3.0}, "b": 1.0, "b": 1, "c": "s", "c": 2.50}',
    );
    expect(renderTemplate("{a.x} {a.y} {b} {c}", payload)).toBe("2 3.0 1 2.50");
    const shapes = parseJson('{"a": [1.0], "a": {"x": 1.5e0}}');
    expect(renderTemplate("{a.x}", shapes)).toBe("1.5e0");
  });

  it("a repeated key whose earlier value has another shape costs the rest of the payload none of its numbers", () => {
    // Before: the earlier object (or array) met a text (or number) in the tree, the walk gave up, and
    // every number of the payload printed as JavaScript prints it (an id past 2^53 rounded).
    const payload = parseJson(
      '{"id": 12345678901234567890, "meta": {"x": [1]}, "meta": "plain", "amount": 10.50,' +
        ' "list": [{"k": [2.0]}, 3], "list": [{"k": 7}, 1.0], "o": {"constructor": {"n": 1.0}}, "o": {}}',
    ) as Record<string, unknown>;
    expect(renderTemplate("{id} {meta} {amount} {list}", payload)).toBe(
      '12345678901234567890 plain 10.50 [{"k":7},1.0]',
    );
    expect(stringifyJson(payload)).toBe(
      '{"id":12345678901234567890,"meta":"plain","amount":10.50,"list":[{"k":7},1.0],"o":{}}',
    );
    const subject = { payload, headers: {}, event: undefined };
    expect(foundText(resolveField("id", subject) as PathLookup & { found: true })).toBe(
      "12345678901234567890",
    );
  });

  it("a body full of altered numbers: the one asked for is found", () => {
    const body = `{"a":[${Array(100_000).fill('{"k":1.0}').join(",")},{"k":2.50}]}`;
    expect(renderTemplate("{a.99999.k} {a.100000.k}", parseJson(body))).toBe("1.0 2.50");
  });

  it("the same key plain in one place and altered in another, quoted in a string, escaped, in an array", () => {
    // The same key plain in one place and altered in another: each holder gets its own text.
    const mixed = parseJson('{"x": {"n": 1.0}, "y": {"n": 1}, "z": {"n" :  7}}');
    expect(renderTemplate("{y.n} {x.n} {z.n}", mixed)).toBe("1 1.0 7");
    // A quoted key inside a string value is not an occurrence of that key.
    expect(renderTemplate("{n}", parseJson('{"s": "\\"n\\": 1.0", "n": 1}'))).toBe("1");
    expect(renderTemplate("{n}", parseJson('{"s": "\\"n\\": 1", "n": 1.0}'))).toBe("1.0");
    // A key the sender escaped is not found by its plain form: the full scan answers.
    expect(renderTemplate("{n}", parseJson('{"\\u006e": 1.0}'))).toBe("1.0");
    // Array elements have no key text to look up.
    expect(renderTemplate("{l.0} {l.1}", parseJson('{"l": [2.0, 3]}'))).toBe("2.0 3");
  });

  it("filters on payload.<path> see the sender's text below the root too", () => {
    const payload = parseJson('{"payload": {"amount": 10.50, "o": {"v": 1.0}}}') as Record<string, unknown>;
    const subject = { payload, headers: {}, event: undefined };
    expect(foundText(resolveField("payload.amount", subject) as PathLookup & { found: true })).toBe("10.50");
    expect(foundText(resolveField("payload.o", subject) as PathLookup & { found: true })).toBe('{"v":1.0}');
  });

  it("extendObject (script_output added to the payload) keeps the sender's numbers", () => {
    const payload = parseJson('{"n": 1.0, "o": {"m": 2.0}}') as Record<string, unknown>;
    const extended = extendObject(payload, { script_output: "hi" });
    expect(stringifyJson(extended)).toBe('{"n":1.0,"o":{"m":2.0},"script_output":"hi"}');
    expect(numberText(extended, "n", 1)).toBe("1.0");
  });

  it("round-trips any JSON value: parseJson then stringifyJson reads back equal to JSON.parse", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value, null, 1);
        const again = stringifyJson(parseJson(text));
        expect(again === undefined ? undefined : JSON.parse(again)).toEqual(JSON.parse(text));
      }),
    );
  });
});

describe("keys keep the order the sender wrote them (spec 2.5 rules 3-5: the payload as JSON)", () => {
  // A form plugin's entry (Gravity Forms posts its fields by number): JavaScript lists keys that are
  // array indices first, so before the dump read {"2": ..., "10": ..., "id": ..., "form_id": ...}.
  const body =
    '{"id": "17", "form_id": "3", "2": "ada@example.com", "1.3": "Ada", "10": "x",' +
    ' "answers": {"q": "why", "7": 1.0, "3": [{"z": 1, "0": 2}]}, "note": "2"}';

  it("finds keys of digits alone, not digit strings that are values", () => {
    const hasDigitKeys = (text: string) => (scanJsonText(text, 512) & DIGIT_KEYS) !== 0;
    expect(hasDigitKeys('{"a": "2", "b": ["10", "7"], "c": "12:30", "d": {"x" : "1"}}')).toBe(false);
    expect(hasDigitKeys('{"a": 1, "2": 0}')).toBe(true);
    expect(hasDigitKeys('{"a": {"10"  :\n 1}}')).toBe(true);
    // Both found in one pass: the number check goes on after a key of digits.
    expect(scanJsonText('{"2": 1, "n": 1.0}', 512)).toBe(DIGIT_KEYS | ALTERED_NUMBERS);
  });

  it("{__raw__} and the default dump list the keys as sent, nested objects and arrays too", () => {
    const payload = parseJson(body);
    const dump = renderTemplate(undefined, payload);
    expect(dump).toBe(
      [
        "{",
        '  "id": "17",',
        '  "form_id": "3",',
        '  "2": "ada@example.com",',
        '  "1.3": "Ada",',
        '  "10": "x",',
        '  "answers": {',
        '    "q": "why",',
        '    "7": 1.0,',
        '    "3": [',
        "      {",
        '        "z": 1,',
        '        "0": 2',
        "      }",
        "    ]",
        "  },",
        '  "note": "2"',
        "}",
      ].join("\n"),
    );
    expect(renderTemplate("[{__raw__}]", payload)).toBe(`[${dump}]`);
  });

  it("nested values, the script's stdin and script_output keep the sender's order", () => {
    const payload = parseJson(body) as Record<string, unknown>;
    expect(renderTemplate("{answers}", payload)).toBe('{"q":"why","7":1.0,"3":[{"z":1,"0":2}]}');
    expect(stringifyJson(payload)).toBe(
      '{"id":"17","form_id":"3","2":"ada@example.com","1.3":"Ada","10":"x",' +
        '"answers":{"q":"why","7":1.0,"3":[{"z":1,"0":2}]},"note":"2"}',
    );
    const extended = extendObject(payload, { script_output: "ok", "2": "replaced" });
    expect(stringifyJson(extended)).toBe(
      '{"id":"17","form_id":"3","2":"replaced","1.3":"Ada","10":"x",' +
        '"answers":{"q":"why","7":1.0,"3":[{"z":1,"0":2}]},"note":"2","script_output":"ok"}',
    );
  });

  it("a key of digits written with escapes keeps its place, with or without an altered number", () => {
    // Before: `"\u0031"` was not seen as a key of digits, so without a number like 1.0 in the body the
    // order was never recorded and the key printed first, as JavaScript lists it.
    expect(scanJsonText('{"a": 1, "\\u0031" : 2}', 512)).toBe(DIGIT_KEYS);
    expect(scanJsonText('{"a": "\\u0031", "\\u0061": 1}', 512)).toBe(0);
    expect(stringifyJson(parseJson('{"a": 1, "\\u0031": 2}'))).toBe('{"a":1,"1":2}');
    expect(stringifyJson(parseJson('{"a": 1, "1\\u0030": {"b": 1, "\\u0032": 3}}'))).toBe(
      '{"a":1,"10":{"b":1,"2":3}}',
    );
    expect(stringifyJson(parseJson('{"a": 1.0, "\\u0031": 2}'))).toBe('{"a":1.0,"1":2}');
  });

  it("a repeated key stays where it first appears; the kept occurrence's order decides", () => {
    expect(stringifyJson(parseJson('{"a": 1, "5": 2, "a": 3}'))).toBe('{"a":3,"5":2}');
    expect(stringifyJson(parseJson('{"o": {"2": 1, "b": 1}, "o": {"b": 2, "2": 2}}'))).toBe(
      '{"o":{"b":2,"2":2}}',
    );
    expect(stringifyJson(parseJson('{"o": {"b": 1, "2": 1}, "o": {"2": 2, "b": 2}}'))).toBe(
      '{"o":{"2":2,"b":2}}',
    );
  });
});

describe("keys keep the order the sender wrote them, objects inside each other (a body of 512 levels)", () => {
  it("lists each level's keys as written, at every depth", () => {
    const depth = 500;
    const text = `{"a":[${Array(3)
      .fill(`${'{"b":1,"0":'.repeat(depth)}"end"${"}".repeat(depth)}`)
      .join(",")}]}`;
    const parsed = parseJson(text) as { a: unknown[] };
    // JavaScript lists "0" before "b"; the sender wrote "b" first, at each of the 500 levels.
    expect(Object.keys(parsed.a[0] as object)).toEqual(["0", "b"]);
    expect(stringifyJson(parsed)).toBe(text);
  });
});

describe("stringifyJsonHead: the first characters of an indented serialization, without writing the rest", () => {
  const codePoints = (text: string, limit: number) => [...text].slice(0, limit).join("");

  it("agrees with stringifyJson on its first `atLeast` characters for any JSON text (sender's numbers, emoji, __proto__ keys)", () => {
    const number = fc.oneof(fc.constant("1.0"), fc.constant("12345678901234567890"), fc.constant("-0"));
    fc.assert(
      fc.property(
        fc.jsonValue(),
        fc.array(number, { maxLength: 3 }),
        fc.integer({ min: 0, max: 300 }),
        fc.integer({ min: 0, max: 4 }),
        (value, numbers, limit, indent) => {
          const text = `{"__proto__":${JSON.stringify(value)},"n":[${numbers.join(",")}],"e":"😀é\\n"}`;
          const parsed = parseJson(text);
          const full = stringifyJson(parsed, indent) as string;
          const head = stringifyJsonHead(parsed, indent, limit) as string;
          expect(codePoints(head, limit)).toBe(codePoints(full, limit));
        },
      ),
    );
  });

  it("writes the keys in the order the sender wrote them, digit keys included, up to where it stops", () => {
    // Long enough that only its start is copied (a shorter body is written whole).
    const text = `{"long":"${"x".repeat(20_000)}","next":"${"y".repeat(20_000)}","2":"z","10":"w"}`;
    const parsed = parseJson(text);
    const head = stringifyJsonHead(parsed, 2, 4000) as string;
    expect(codePoints(head, 4000)).toBe(codePoints(stringifyJson(parsed, 2) as string, 4000));
    expect(head.startsWith('{\n  "long": "xxx')).toBe(true);
    expect(head).not.toContain('"2"');
  });

  it("writes only the start of a long string or key, cut between characters, never half an emoji", () => {
    const cases = [
      `{"event":"push","big":"${"a".repeat(1_000_000)}"}`,
      `{"big":"${"\\ud800".repeat(200_000)}"}`,
      `{"big":"${"😀".repeat(300_000)}","after":1.0}`,
      `{"big":"x${"😀".repeat(300_000)}"}`,
      `{"n":1.0,"${"k😀".repeat(200_000)}":{"x":2.0},"2":"digit key"}`,
    ];
    for (const text of cases) {
      const parsed = parseJson(text);
      for (const limit of [0, 1, 7, 4000]) {
        const head = stringifyJsonHead(parsed, 2, limit) as string;
        // A long string is serialized from its first characters only, not whole and then thrown away.
        expect(head.length).toBeLessThan(6 * limit + 200);
        expect(codePoints(head, limit)).toBe(codePoints(stringifyJson(parsed, 2) as string, limit));
      }
    }
  });

  it("writes a short value whole, the same text as stringifyJson's", () => {
    const parsed = parseJson(
      '{"n":1.0,"2":"x","a":[1.50,{"b":"😀"}],"__proto__":{"c":12345678901234567890}}',
    );
    for (const indent of [0, 2]) {
      expect(stringifyJsonHead(parsed, indent, 4000)).toBe(stringifyJson(parsed, indent));
    }
  });

  it("keeps the sender's numbers, as written, in the start it writes of a long body", () => {
    const long = parseJson(`{"a":[[${Array(100_000).fill("1.0").join(",")}]]}`);
    const head = stringifyJsonHead(long, 2, 4000) as string;
    expect(head.length).toBeLessThan(20_000);
    expect(head.startsWith('{\n  "a": [\n    [\n      1.0,\n      1.0,')).toBe(true);
    expect(codePoints(head, 4000)).toBe(codePoints(stringifyJson(long, 2) as string, 4000));
  });
});

describe("stringifyJson of a tree nested deeper than JSON.stringify's walk on the call stack goes", () => {
  const nested = (depth: number, leaf: string) => `${"[".repeat(depth)}${leaf}${"]".repeat(depth)}`;

  it("is written with a stack of its own, the numbers as written, at 20,000 levels (JSON.stringify runs out at about 4,500)", () => {
    for (const leaf of ["1", "1.50"]) {
      const text = `{"big":12345678901234567890,"x":${nested(20_000, leaf)}}`;
      expect(stringifyJson(parseJson(text, Number.POSITIVE_INFINITY))).toBe(text);
    }
    // With nothing kept: JSON.stringify first, then the same writing once it ran out of stack.
    expect(stringifyJson(JSON.parse(nested(20_000, "1")))).toBe(nested(20_000, "1"));
  });

  it("leaves out what JSON leaves out (an undefined field a change set, in any order of keys) and writes null for it in an array, as JSON.stringify does", () => {
    const tree = parseJson('{"2": 1.50, "a": {"b": 1.0}, "c": [1.0]}') as Record<string, unknown>;
    const a = tree.a as Record<string, unknown>;
    a.gone = undefined;
    a.fn = () => 1;
    tree.only = { none: undefined };
    (tree.c as unknown[]).push(undefined);
    expect(stringifyJson(tree, 2)).toBe(
      JSON.stringify(tree, null, 2)
        .replace('"2": 1.5', '"2": 1.50')
        .replace('"b": 1', '"b": 1.0')
        .replace("[\n    1,", "[\n    1.0,"),
    );
  });
});
