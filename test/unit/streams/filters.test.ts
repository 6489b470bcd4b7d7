import { createRequire } from "node:module";
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import type { Filter } from "../../../src/config/sections/filters.js";
import { filterSchema } from "../../../src/config/sections/filters.js";
import {
  type FilterDeps,
  type FilterSubject,
  matches,
  matchesAll,
  regexProblem,
} from "../../../src/streams/filters.js";
import { parseJson } from "../../../src/streams/jsonNumbers/index.js";
import { githubExample } from "../../helpers/githubExamples.js";

// The RE2 the filters run: re2js as src/streams/regex.ts requires it at the first pattern (its CommonJS build).
const { RE2JS } = createRequire(import.meta.url)("re2js") as typeof import("re2js");

const lists: Record<string, ReadonlySet<string>> = {
  "bots.txt": new Set(["dependabot[bot]", "renovate[bot]"]),
  "numbers.json": new Set(["1", "2", "true"]),
};
const reads: string[] = [];
const deps: FilterDeps = {
  readList(path) {
    reads.push(path);
    const list = lists[path];
    if (list === undefined) throw new Error(`ENOENT: ${path}`);
    return list;
  },
};

const pr = githubExample("pull_request", "opened");
const subject = (payload: unknown, event?: string, headers: Record<string, string> = {}): FilterSubject => ({
  payload,
  event,
  headers,
});
const prSubject = subject(pr, "pull_request", {
  "x-github-event": "pull_request",
  "user-agent": "GitHub-Hookshot/abc",
});
const is = (filter: Filter, s: FilterSubject = prSubject) => matches(filter, s, deps);

describe("field resolution", () => {
  it("reads dotted paths from the body root of a real pull_request payload", () => {
    expect(is({ field: "pull_request.user.login", equals: pr.pull_request.user.login })).toBe(true);
    expect(is({ field: "pull_request.head.ref", equals: "not-the-branch" })).toBe(false);
  });

  it("payload.x reads a top-level payload object when present, else the body root", () => {
    const wrapped = subject({ payload: { state: "open" }, state: "root" });
    expect(is({ field: "payload.state", equals: "open" }, wrapped)).toBe(true);
    const flat = subject({ state: "root" });
    expect(is({ field: "payload.state", equals: "root" }, flat)).toBe(true);
    const notAnObject = subject({ payload: "text", state: "root" });
    expect(is({ field: "payload.state", equals: "root" }, notAnObject)).toBe(true);
  });

  it("a path is dot notation only: a key holding a dot cannot be named, brackets are part of a key, an index is plain digits", () => {
    const body = subject({ "a.b": 1, "commits[0]": "k", commits: [{ id: "c0" }, { id: "c1" }] });
    expect(is({ field: "a.b", exists: true }, body)).toBe(false);
    expect(is({ field: "commits[0].id", exists: true }, body)).toBe(false);
    expect(is({ field: "commits[0]", equals: "k" }, body)).toBe(true);
    expect(is({ field: "commits.1.id", equals: "c1" }, body)).toBe(true);
    for (const index of ["-1", "01", "+1", "2", " 1"])
      expect(is({ field: `commits.${index}.id`, exists: true }, body)).toBe(false);
  });

  it("event and event_type are the resolved event type, not a body field", () => {
    const s = subject({ event_type: "from-body" }, "from-header");
    expect(is({ field: "event", equals: "from-header" }, s)).toBe(true);
    expect(is({ field: "event_type", equals: "from-header" }, s)).toBe(true);
    expect(is({ field: "event", exists: false }, subject({}, undefined))).toBe(true);
    // A body key of that name is read with the payload. prefix.
    const calendly = subject({ event: "invitee.created" }, undefined);
    expect(is({ field: "event", equals: "invitee.created" }, calendly)).toBe(false);
    expect(is({ field: "payload.event", equals: "invitee.created" }, calendly)).toBe(true);
  });

  it("headers.<Name> reads a header case-insensitively", () => {
    expect(is({ field: "headers.X-GitHub-Event", equals: "pull_request" })).toBe(true);
    expect(is({ field: "headers.User-Agent", regex: "^GitHub-Hookshot/" })).toBe(true);
    expect(is({ field: "headers.X-Missing", missing: true })).toBe(true);
  });
});

describe("leaf operators", () => {
  const s = subject({
    n: 1,
    s: "1",
    flag: false,
    nil: null,
    text: "fix: crash on start",
    tags: ["a", 2, true],
    map: { k: 1, "2": 0 },
  });

  it("exists / missing treat a present null as present", () => {
    expect(is({ field: "nil", exists: true }, s)).toBe(true);
    expect(is({ field: "nil", missing: true }, s)).toBe(false);
    expect(is({ field: "absent", exists: false }, s)).toBe(true);
    expect(is({ field: "absent", missing: true }, s)).toBe(true);
    expect(is({ field: "absent", exists: true }, s)).toBe(false);
  });

  it("equals is strict JSON equality: a number never equals its numeric string", () => {
    expect(is({ field: "n", equals: 1 }, s)).toBe(true);
    expect(is({ field: "n", equals: "1" }, s)).toBe(false);
    expect(is({ field: "s", equals: 1 }, s)).toBe(false);
    expect(is({ field: "flag", equals: false }, s)).toBe(true);
    expect(is({ field: "nil", equals: null }, s)).toBe(true);
    expect(is({ field: "absent", equals: null }, s)).toBe(false);
    expect(is({ field: "map", equals: "[object Object]" }, s)).toBe(false);
  });

  it("not_equals is the negation of equals, so a missing field matches", () => {
    expect(is({ field: "n", not_equals: 1 }, s)).toBe(false);
    expect(is({ field: "n", not_equals: "1" }, s)).toBe(true);
    expect(is({ field: "absent", not_equals: "x" }, s)).toBe(true);
  });

  it("contains: substring of a string, member of a list, key of a dict", () => {
    expect(is({ field: "text", contains: "crash" }, s)).toBe(true);
    expect(is({ field: "text", contains: "Crash" }, s)).toBe(false);
    expect(is({ field: "tags", contains: 2 }, s)).toBe(true);
    expect(is({ field: "tags", contains: "2" }, s)).toBe(false);
    expect(is({ field: "tags", contains: true }, s)).toBe(true);
    expect(is({ field: "map", contains: "k" }, s)).toBe(true);
    expect(is({ field: "map", contains: 2 }, s)).toBe(true);
    expect(is({ field: "map", contains: "toString" }, s)).toBe(false);
    expect(is({ field: "n", contains: 1 }, s)).toBe(false);
  });

  it("contains null (also `contains:` with nothing after it): a member of a list only, never a substring or key", () => {
    const s = subject({
      text: "nullable",
      list: ["a", null],
      strings: ["null"],
      map: { null: 1 },
      none: null,
    });
    expect(is({ field: "text", contains: null }, s)).toBe(false);
    expect(is({ field: "map", contains: null }, s)).toBe(false);
    expect(is({ field: "none", contains: null }, s)).toBe(false);
    expect(is({ field: "strings", contains: null }, s)).toBe(false);
    expect(is({ field: "list", contains: null }, s)).toBe(true);
    // The text "null" is still text.
    expect(is({ field: "text", contains: "null" }, s)).toBe(true);
    expect(is({ field: "map", contains: "null" }, s)).toBe(true);
    const header = subject({}, undefined, { "x-note": "null" });
    expect(is({ field: "headers.X-Note", contains: null }, header)).toBe(false);
  });

  it("in: the value is one of the inline list (the spec's action example)", () => {
    expect(is({ field: "action", in: ["opened", "synchronize", "reopened"] })).toBe(true);
    expect(is({ field: "action", in: ["closed", "labeled"] })).toBe(false);
    expect(is({ field: "n", in: ["1"] }, s)).toBe(false);
    expect(is({ field: "absent", in: [null] }, s)).toBe(false);
  });

  it("in_file: the stringified value is in the list; an unreadable list never matches", () => {
    const bot = subject({ sender: { login: "dependabot[bot]" }, n: 2, ok: true });
    expect(is({ field: "sender.login", in_file: "bots.txt" }, bot)).toBe(true);
    expect(is({ field: "sender.login", in_file: "bots.txt" })).toBe(false);
    expect(is({ field: "n", in_file: "numbers.json" }, bot)).toBe(true);
    expect(is({ field: "ok", in_file: "numbers.json" }, bot)).toBe(true);
    expect(is({ field: "sender.login", in_file: "gone.txt" }, bot)).toBe(false);
  });

  it("regex: an RE2 search over the stringified value", () => {
    expect(is({ field: "pull_request.title", regex: "README" })).toBe(true);
    expect(is({ field: "pull_request.title", regex: "^README" })).toBe(false);
    expect(is({ field: "number", regex: "^\\d+$" })).toBe(true);
    expect(is({ field: "text", regex: "(?i)CRASH" }, s)).toBe(true);
    expect(is({ field: "absent", regex: ".*" }, s)).toBe(false);
  });

  it("regex and in_file see numbers as the sender wrote them (10.50, 1.0), not as JavaScript prints them", () => {
    const sent = subject(parseJson('{"amount": 10.50, "version": 1.0, "nested": {"v": [2.0]}}'));
    expect(is({ field: "amount", regex: "^\\d+\\.\\d{2}$" }, sent)).toBe(true);
    expect(is({ field: "version", regex: "^1\\.0$" }, sent)).toBe(true);
    expect(is({ field: "nested", regex: "\\[2\\.0\\]" }, sent)).toBe(true);
    for (const list of [["1.0"], ["1"]]) {
      const readList = () => new Set(list);
      expect(matches({ field: "version", in_file: "v.txt" }, sent, { readList }), list[0]).toBe(true);
    }
  });

  it("regex: the escapes Python and JavaScript patterns use (\\uXXXX, \\u{…}, \\UXXXXXXXX, \\Z) work", () => {
    const text = subject({ text: "café 😀 end" });
    expect(is({ field: "text", regex: "caf\\u00e9" }, text)).toBe(true);
    expect(is({ field: "text", regex: "\\u{1F600}" }, text)).toBe(true);
    expect(is({ field: "text", regex: "\\U0001F600 end\\Z" }, text)).toBe(true);
    expect(is({ field: "text", regex: "caf\\u00e8" }, text)).toBe(false);
    expect(is({ field: "text", regex: "^café\\Z" }, text)).toBe(false);
    // An escaped backslash followed by u is a literal backslash and u, not a code point.
    expect(is({ field: "text", regex: "\\\\u00e9" }, subject({ text: "\\u00e9" }))).toBe(true);
    expect(regexProblem("caf\\u00e9\\Z")).toBeUndefined();
  });

  it("regex: Python's {,n} (minimum left out) repeats 0 to n times, as Python reads it, not the literal text {,n}", () => {
    const zip = (code: string) => subject({ code });
    expect(is({ field: "code", regex: "^\\d{,3}$" }, zip("12"))).toBe(true);
    expect(is({ field: "code", regex: "^\\d{,3}$" }, zip("1234"))).toBe(false);
    expect(is({ field: "code", regex: "^(?:ab){,2}$" }, zip("abab"))).toBe(true);
    expect(is({ field: "code", regex: "^a{,}$" }, zip("aaaa"))).toBe(true);
    // Escaped, or inside a class, a brace is itself, as in Python.
    expect(is({ field: "code", regex: "^a\\{,3}$" }, zip("a{,3}"))).toBe(true);
    expect(is({ field: "code", regex: "^[{,3}]+$" }, zip("{,3}"))).toBe(true);
    expect(is({ field: "code", regex: "^[]{,3}]+$" }, zip("]{"))).toBe(true);
    expect(is({ field: "code", regex: "^[[:digit:]]{,2}$" }, zip("12"))).toBe(true);
    expect(is({ field: "code", regex: "^\\Qa{,3}\\E$" }, zip("a{,3}"))).toBe(true);
    // Nothing to repeat: Python refuses such a pattern, and so does the config load.
    expect(regexProblem("{,3}x")).toBeDefined();
  });

  it("regex on text in any script: (?i) folds any case, . is one character (an emoji too), \\w \\d \\s \\b are ASCII", () => {
    const text = subject({ name: "héllo", up: "CAFÉ", emoji: "😀", greek: "αβγ", word: "un café noir" });
    expect(is({ field: "up", regex: "(?i)^café$" }, text)).toBe(true);
    expect(is({ field: "emoji", regex: "^.$" }, text)).toBe(true);
    expect(is({ field: "greek", regex: "^\\p{Greek}+$" }, text)).toBe(true);
    expect(is({ field: "name", regex: "^[\\p{L}\\p{N}_]+$" }, text)).toBe(true);
    // As docs/configuration.md says: RE2's classes are ASCII (Python's are not).
    expect(is({ field: "name", regex: "^\\w+$" }, text)).toBe(false);
    expect(is({ field: "word", regex: "\\bcafé\\b" }, text)).toBe(false);
    expect(is({ field: "word", regex: "\\bcaf" }, text)).toBe(true);
    expect(is({ field: "digits", regex: "^\\d+$" }, subject({ digits: "١٢٣" }))).toBe(false);
    expect(is({ field: "space", regex: "^\\s$" }, subject({ space: "\u00a0" }))).toBe(false);
  });

  it("regex: invalid or non-RE2 patterns (backreferences, lookaround) never match", () => {
    expect(is({ field: "text", regex: "(" }, s)).toBe(false);
    expect(is({ field: "text", regex: "(a)\\1" }, s)).toBe(false);
    expect(regexProblem("(?<=a)b")).toBeTypeOf("string");
    expect(regexProblem("^fix(\\(.+\\))?:")).toBeUndefined();
  });

  it("regex runs on RE2 (linear time), so a classic ReDoS pattern on a hostile subject ends, unmatched", () => {
    // A backtracking engine (RegExp) would not finish `^(a+)+$` against 50 000 a's and a "!" — the test
    // would hang until its timeout; RE2 matches in one pass over the text.
    const text = `${"a".repeat(50_000)}!`;
    const re2 = vi.spyOn(RE2JS.prototype, "test");
    const backtracking = vi.spyOn(RegExp.prototype, "exec");
    let matched: boolean;
    let regExpCalls: number;
    let re2Inputs: unknown[];
    try {
      matched = is({ field: "text", regex: "^(a+)+$" }, subject({ text }));
      regExpCalls = backtracking.mock.calls.length;
      re2Inputs = re2.mock.calls.map(([input]) => input);
    } finally {
      backtracking.mockRestore();
      re2.mockRestore();
    }
    expect(matched).toBe(false);
    expect(re2Inputs.length).toBe(1);
    expect(re2Inputs[0] === text).toBe(true);
    expect(regExpCalls).toBe(0);
  });
});

describe("groups", () => {
  it("all, any and not nest", () => {
    const filter: Filter = {
      all: [
        { field: "action", in: ["opened", "reopened"] },
        {
          any: [
            { field: "pull_request.draft", equals: true },
            { not: { field: "pull_request.user.login", in_file: "bots.txt" } },
          ],
        },
      ],
    };
    expect(is(filter)).toBe(true);
    expect(is({ not: filter })).toBe(false);
    expect(
      is({
        any: [
          { field: "action", equals: "closed" },
          { field: "absent", exists: true },
        ],
      }),
    ).toBe(false);
  });

  it("fails closed: a broken in_file list or regex under not does not let everything through", () => {
    expect(is({ not: { field: "action", in_file: "missing-blocklist.txt" } })).toBe(false);
    expect(is({ not: { field: "action", regex: "(" } })).toBe(false);
    expect(
      matchesAll(
        [{ field: "action", equals: "opened" }, { not: { field: "action", in_file: "gone" } }],
        prSubject,
        deps,
      ),
    ).toBe(false);
  });

  it("an unusable list leaves a group undecided only when its other members do not decide it, in any order", () => {
    const broken: Filter = { field: "action", in_file: "gone.txt" };
    const yes: Filter = { field: "action", equals: "opened" };
    const no: Filter = { field: "action", equals: "closed" };
    // any with a member that matches, all with one that does not: decided whatever the list holds.
    for (const members of [
      [broken, yes],
      [yes, broken],
    ]) {
      expect(is({ any: members })).toBe(true);
      expect(is({ not: { any: members } })).toBe(false);
    }
    for (const members of [
      [broken, no],
      [no, broken],
    ]) {
      expect(is({ all: members })).toBe(false);
      expect(is({ not: { all: members } })).toBe(true);
    }
    // Otherwise the group depends on the list: it fails closed, under not as well.
    for (const members of [
      [broken, no],
      [no, broken],
    ]) {
      expect(is({ any: members })).toBe(false);
      expect(is({ not: { any: members } })).toBe(false);
    }
    for (const members of [
      [broken, yes],
      [yes, broken],
    ]) {
      expect(is({ all: members })).toBe(false);
      expect(is({ not: { all: members } })).toBe(false);
    }
  });

  it("matchesAll needs every top-level filter; an empty list matches", () => {
    expect(matchesAll([], prSubject, deps)).toBe(true);
    expect(
      matchesAll(
        [
          { field: "action", equals: "opened" },
          { field: "number", equals: pr.number },
        ],
        prSubject,
        deps,
      ),
    ).toBe(true);
    expect(
      matchesAll(
        [
          { field: "action", equals: "opened" },
          { field: "number", equals: -1 },
        ],
        prSubject,
        deps,
      ),
    ).toBe(false);
  });

  it("reads an in_file list only when the field is present", () => {
    reads.length = 0;
    is({ field: "absent", in_file: "bots.txt" });
    expect(reads).toEqual([]);
  });
});

describe("filters parsed by the config schema", () => {
  it("evaluates a YAML-shaped filter list after zod parsing", () => {
    const raw = [
      { field: "action", in: ["opened"] },
      { not: { field: "sender.login", regex: "\\[bot\\]$" } },
    ];
    const parsed = raw.map((f) => filterSchema.parse(f));
    expect(matchesAll(parsed, prSubject, deps)).toBe(true);
  });

  it("never throws on arbitrary payloads, headers and paths", () => {
    const leafFilter = fc.record({ field: fc.string(), regex: fc.string({ minLength: 1 }) });
    fc.assert(
      fc.property(
        fc.jsonValue(),
        fc.dictionary(fc.string(), fc.string()),
        fc.array(leafFilter),
        (payload, headers, filters) => {
          expect(typeof matchesAll(filters, subject(payload, undefined, headers), deps)).toBe("boolean");
        },
      ),
    );
  });
});
