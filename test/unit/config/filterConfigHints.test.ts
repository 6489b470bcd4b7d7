import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { matchesAll } from "../../../src/streams/filters.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome | undefined;
afterEach(() => home?.cleanup());

/** `prefix`: what the file starts with (`%YAML 1.1\n---\n`), which moves the filter's line down. */
function loadFilters(filters: string, prefix = "") {
  home = tempHome();
  home.write(
    "config.yaml",
    `${prefix}platforms:\n  webhook:\n    secret: s\n    routes:\n      gh:\n        filters:\n          - ${filters}\n`,
  );
  return loadConfig({ home: home.dir, env: {} });
}

describe("filter config errors (spec 2.3 operator values)", () => {
  it("an operator as other tools name it (matches, eq, not_in, startswith, gt, and/or/none, path) says what svc writes", () => {
    const cases: [string, string][] = [
      ["{field: ref, matches: '^v'}", `"matches" — write regex (an RE2 search of the value's text)`],
      ["{field: action, eq: opened}", `"eq" — write equals`],
      ["{field: action, is: opened}", `"is" — write equals`],
      ["{field: action, not_in: [closed]}", `"not_in" — write not: {field: ..., in: [...]}`],
      [
        "{field: ref, startswith: refs/tags/}",
        `"startswith" — write regex: '^<text>' (an RE2 search: ^ anchors it at the start)`,
      ],
      [
        "{field: n, gt: 5}",
        `"gt" — filters have no numeric comparison: match the digits with regex, or decide in the route's script`,
      ],
      ["{or: [{field: a, exists: true}]}", `"or" — write any: [...]`],
      // Not "did you mean not" (one letter away): none of them is not: {any: [...]}.
      ["{none: [{field: a, exists: true}]}", `"none" — write not: {any: [...]} (none of them matches)`],
      [
        "{path: action, equals: opened}",
        `"path" — write field (a dotted path such as pull_request.user.login)`,
      ],
    ];
    for (const [filter, hint] of cases)
      expect(() => loadFilters(filter)).toThrow(
        `routes.gh.filters[0]: unknown filter key ${hint} (a filter is field plus one of`,
      );
    // A near miss of svc's own names keeps its "did you mean".
    expect(() => loadFilters("{field: a, equal: 1}")).toThrow(
      `unknown filter key "equal" — did you mean "equals"?`,
    );
  });

  it("missing: false names the operator to use instead, not zod's 'expected one of true'", () => {
    expect(() => loadFilters("{field: pull_request, missing: false}")).toThrow(
      /routes\.gh\.filters\[0\]\.missing: missing takes true \(for a field that must be present, use exists: true\)/,
    );
    expect(
      loadFilters("{field: pull_request, missing: true}").config.platforms.webhook.routes.gh?.filters,
    ).toEqual([{ field: "pull_request", missing: true }]);
  });

  it("a field with an empty part between dots (never names a value, so never matches) is refused", () => {
    for (const field of ["pull_request..title", ".action", "action.", "headers."])
      expect(() => loadFilters(`{field: "${field}", exists: true}`)).toThrow(
        `routes.gh.filters[0].field: "${field}" has an empty part between dots, so it never names a value — write a dotted path such as pull_request.user.login`,
      );
    expect(
      loadFilters("{field: commits.0.id, exists: true}").config.platforms.webhook.routes.gh?.filters,
    ).toEqual([{ field: "commits.0.id", exists: true }]);
  });

  it("a field of digits written unquoted (a number to YAML) says to quote it", () => {
    expect(() => loadFilters("{field: 2024, exists: true}")).toThrow(
      `routes.gh.filters[0].field: expected text (a dotted path such as pull_request.user.login), got 2024 — a key of digits is text: put it in quotes`,
    );
    expect(loadFilters("{field: '2024', exists: true}").config.platforms.webhook.routes.gh?.filters).toEqual([
      { field: "2024", exists: true },
    ]);
  });
});

describe("filter values that can never match", () => {
  it("in: [] is refused (it would ignore every event)", () => {
    expect(() => loadFilters("{field: action, in: []}")).toThrow(
      "routes.gh.filters[0].in: an empty list matches nothing — list the values, e.g. in: [opened, reopened]",
    );
  });

  it("a list or mapping where one value goes says how each operator takes several values", () => {
    const one = "expected one value (text, a number, true/false or null)";
    expect(() => loadFilters("{field: action, not_equals: [closed, merged]}")).toThrow(
      `routes.gh.filters[0].not_equals: ${one} — to match none of several values use not: {field: ..., in: [...]}`,
    );
    expect(() => loadFilters("{field: labels, contains: [bug, p1]}")).toThrow(
      `routes.gh.filters[0].contains: ${one} — to match any of several use any: [{field: ..., contains: a}, {field: ..., contains: b}]`,
    );
    expect(() => loadFilters("{field: pull_request.user, equals: {login: octocat}}")).toThrow(
      `routes.gh.filters[0].equals: ${one}, got a mapping — to compare a key inside the field, add the key to field's dotted path`,
    );
    // The example names the operator written, not always equals.
    expect(() => loadFilters("{field: pull_request.user, contains: {login: octocat}}")).toThrow(
      "(field: pull_request.user, contains: {login: x} → field: pull_request.user.login, contains: x)",
    );
    expect(() => loadFilters("{field: action, in: [[opened]]}")).toThrow(
      new RegExp(`routes\\.gh\\.filters\\[0\\]\\.in\\[0\\]: ${one.replace(/[()/]/g, "\\$&")}$`, "m"),
    );
  });

  it("an unquoted yes/no/on/off (text in YAML 1.2) compared with a payload field is refused, saying which to write", () => {
    // `no` was the text "no": a boolean draft field never equals it, and not_equals always matched.
    expect(() => loadFilters("{field: pull_request.draft, equals: no}")).toThrow(
      "line 7: platforms.webhook.routes.gh.filters[0].equals: no is text in YAML 1.2, not a boolean — write false to compare with a true/false field, or 'no' in quotes to compare with that text",
    );
    expect(() => loadFilters("{not: {field: y, in: [opened, On]}}")).toThrow(
      "routes.gh.filters[0].not.in[1]: On is text in YAML 1.2, not a boolean — write true",
    );
    // Quoted it is the text; on a header or the event type (text) it is the text too.
    const routes = (filter: string) => loadFilters(filter).config.platforms.webhook.routes.gh?.filters;
    expect(routes("{field: answer, equals: 'yes'}")).toEqual([{ field: "answer", equals: "yes" }]);
    expect(routes("{field: headers.X-Debug, equals: on}")).toEqual([
      { field: "headers.X-Debug", equals: "on" },
    ]);
  });

  it("an unquoted contains number YAML reads as another text (2.0 is 2) is refused, saying to quote it", () => {
    // `contains: 2.0` was the number 2, so a string field was searched for "2": "v12" matched, without a word.
    expect(() => loadFilters("{field: title, contains: 2.0}")).toThrow(
      `line 7: platforms.webhook.routes.gh.filters[0].contains: YAML reads 2.0 as the number 2, so contains looks for the text "2" in a string, not "2.0" — put it in quotes to look for that text: contains: '2.0' (write 2 to find the number in a list)`,
    );
    for (const [written, read] of [
      ["1e3", "1000"],
      ["007", "7"],
      ["+5", "5"],
    ])
      expect(() => loadFilters(`{any: [{field: title, contains: ${written}}]}`)).toThrow(
        `routes.gh.filters[0].any[0].contains: YAML reads ${written} as the number ${read}`,
      );
    // Quoted it is that text, found as a substring; a number written as its own text is that number.
    const subject = (title: unknown) => ({ payload: { title }, event: undefined, headers: {} });
    const none = { readList: () => new Set<string>() };
    const quoted =
      loadFilters("{field: title, contains: '2.0'}").config.platforms.webhook.routes.gh?.filters ?? [];
    expect(matchesAll(quoted, subject("v2.0"), none)).toBe(true);
    expect(matchesAll(quoted, subject("v12"), none)).toBe(false);
    for (const plain of ["42", "1.5", "-3", "12345678901234567890"])
      expect(() => loadFilters(`{field: title, contains: ${plain}}`), plain).not.toThrow();
    // equals compares numbers by value (1.0 equals 1), and a header's value keeps its text: neither refused.
    expect(() => loadFilters("{field: version, equals: 2.0}")).not.toThrow();
    expect(
      loadFilters("{field: headers.X-Version, contains: 2.0}").config.platforms.webhook.routes.gh?.filters,
    ).toEqual([{ field: "headers.X-Version", contains: "2.0" }]);
  });

  it("an unquoted True, FALSE, Null or ~ (a boolean or null whose text is another) under contains of a payload field is refused, saying to quote it", () => {
    // `contains: True` was the boolean true, so a string was searched for "true": "untrue" matched, "True story" not.
    expect(() => loadFilters("{field: s, contains: True}")).toThrow(
      `line 7: platforms.webhook.routes.gh.filters[0].contains: YAML reads True as the boolean true, so contains looks for the text "true" in a string, not "True" — put it in quotes to look for that text: contains: 'True' (write true to find the boolean in a list)`,
    );
    expect(() => loadFilters("{any: [{field: s, contains: FALSE}]}")).toThrow(
      `routes.gh.filters[0].any[0].contains: YAML reads FALSE as the boolean false, so contains looks for the text "false" in a string, not "FALSE"`,
    );
    for (const word of ["Null", "NULL", "~"])
      expect(() => loadFilters(`{field: s, contains: ${word}}`), word).toThrow(
        `routes.gh.filters[0].contains: YAML reads ${word} as null, which contains finds in a list only (null is no text), never the text "${word}" in a string — put it in quotes to look for that text: contains: '${word}' (write null to find a null in a list)`,
      );
    // Under %YAML 1.1 a yes is such a boolean too.
    expect(() => loadFilters("{field: s, contains: yes}", "%YAML 1.1\n---\n")).toThrow(
      `line 9: platforms.webhook.routes.gh.filters[0].contains: YAML reads yes as the boolean true, so contains looks for the text "true"`,
    );
    // Quoted it is that text, found as a substring; the lowercase words (and contains: with nothing) are JSON's.
    const subject = (s: unknown) => ({ payload: { s }, event: undefined, headers: {} });
    const none = { readList: () => new Set<string>() };
    const quoted =
      loadFilters("{field: s, contains: 'True'}").config.platforms.webhook.routes.gh?.filters ?? [];
    expect(matchesAll(quoted, subject("True story"), none)).toBe(true);
    expect(matchesAll(quoted, subject("untrue"), none)).toBe(false);
    const routes = (filter: string) => loadFilters(filter).config.platforms.webhook.routes.gh?.filters;
    expect(routes("{field: tags, contains: true}")).toEqual([{ field: "tags", contains: true }]);
    expect(routes("{field: tags, contains: null}")).toEqual([{ field: "tags", contains: null }]);
    expect(routes("{field: tags, contains: }")).toEqual([{ field: "tags", contains: null }]);
  });

  it("an unquoted True, FALSE, Null or ~ under equals, not_equals or in of a payload field is refused as yes/no are, saying which to write", () => {
    expect(() => loadFilters("{field: pull_request.draft, equals: True}")).toThrow(
      "line 7: platforms.webhook.routes.gh.filters[0].equals: YAML reads True as the boolean true, not as text — write true to compare with a true/false field, or 'True' in quotes to compare with that text",
    );
    expect(() => loadFilters("{not: {field: merged, not_equals: FALSE}}")).toThrow(
      "routes.gh.filters[0].not.not_equals: YAML reads FALSE as the boolean false, not as text — write false to compare with a true/false field, or 'FALSE' in quotes",
    );
    expect(() => loadFilters("{field: state, in: [open, Null]}")).toThrow(
      "routes.gh.filters[0].in[1]: YAML reads Null as null, not as text — write null to compare with a null field, or 'Null' in quotes to compare with that text",
    );
    expect(() => loadFilters("{field: closed_at, equals: ~}")).toThrow(
      "routes.gh.filters[0].equals: YAML reads ~ as null, not as text — write null",
    );
    expect(() => loadFilters("{field: draft, equals: On}", "%YAML 1.1\n---\n")).toThrow(
      "routes.gh.filters[0].equals: YAML reads On as the boolean true, not as text — write true",
    );
    const routes = (filter: string) => loadFilters(filter).config.platforms.webhook.routes.gh?.filters;
    expect(routes("{field: draft, in: [true, false, null]}")).toEqual([
      { field: "draft", in: [true, false, null] },
    ]);
    expect(routes("{field: answer, equals: 'True'}")).toEqual([{ field: "answer", equals: "True" }]);
  });

  it("a number past 2^53 written with a fraction or exponent (rounded, so it matches its neighbours) is refused, naming its digits", () => {
    // 1234567890123456789.0 is the float 1234567890123456800: it equalled the ids ...789 and ...800 alike.
    expect(() => loadFilters("{field: chat.id, equals: 1234567890123456789.0}")).toThrow(
      "line 7: platforms.webhook.routes.gh.filters[0].equals: YAML reads 1234567890123456789.0 as the number 1234567890123456800, which past 2^53 stands for its neighbours too (another chat or user id may match) — write the integer's digits alone, 1234567890123456789 (unquoted or in quotes: such an id is compared digit for digit)",
    );
    expect(() => loadFilters("{not: {field: user.id, in: [1, -1.2345678901234567891e20]}}")).toThrow(
      "routes.gh.filters[0].not.in[1]: YAML reads -1.2345678901234567891e20 as the number -123456789012345680000, which past 2^53 stands for its neighbours too (another chat or user id may match) — write the integer's digits alone, -123456789012345678910 (unquoted",
    );
    expect(() => loadFilters("{field: amount, not_equals: 12345678901234567.5}")).toThrow(
      "routes.gh.filters[0].not_equals: YAML reads 12345678901234567.5 as the number 12345678901234568, which past 2^53 stands for its neighbours too (another chat or user id may match) — write the value in quotes to compare with text, or compare its digits with regex",
    );
    // Digits alone are exact, quoted or not; a float within 2^53 and a header's value (text) are not refused.
    const routes = (filter: string) => loadFilters(filter).config.platforms.webhook.routes.gh?.filters;
    expect(routes("{field: chat.id, equals: 1234567890123456789}")).toEqual([
      { field: "chat.id", equals: "1234567890123456789" },
    ]);
    expect(routes("{field: price, equals: 9007199254740991.0}")).toEqual([
      { field: "price", equals: 9007199254740991 },
    ]);
    expect(routes("{field: headers.X-Chat, equals: 1234567890123456789.0}")).toEqual([
      { field: "headers.X-Chat", equals: "1234567890123456789.0" },
    ]);
  });

  it("a regex RE2 refuses gets the way out that fits what it uses, and a syntax error none", () => {
    const refused = "routes.gh.filters[0].regex: not a valid RE2 pattern (error parsing regexp: ";
    const lookaround =
      ' — RE2 has no lookahead or lookbehind: express "does not match" with not: {field: ..., regex: ...}';
    // RE2 calls a lookbehind an "invalid named capture": the hint says what it is.
    expect(() => loadFilters("{field: title, regex: '(?<!WIP)x'}")).toThrow(
      `${refused}invalid named capture: \`(?<!WIP)x\`)${lookaround}`,
    );
    expect(() => loadFilters("{field: title, regex: '^(?!WIP)'}")).toThrow(lookaround);
    expect(() => loadFilters("{field: title, regex: '(a)\\1'}")).toThrow(
      "— RE2 has no backreferences: match each part with its own pattern, or compare the fields in a script",
    );
    expect(() => loadFilters("{field: title, regex: '(fix'}")).toThrow(
      /regex: not a valid RE2 pattern \(error parsing regexp: missing closing \): `\(fix`\)$/m,
    );
  });

  it("an empty regex or in_file says what to write, not to leave the operator out", () => {
    expect(() => loadFilters('{field: action, regex: ""}')).toThrow(
      "routes.gh.filters[0].regex: an empty pattern matches every value — write a pattern, or use exists: true for any value",
    );
    expect(() => loadFilters('{field: sender.login, in_file: ""}')).toThrow(
      "routes.gh.filters[0].in_file: an empty path names no list — write the list file's path (relative to the profile root)",
    );
  });
});

describe("filter values on headers and the event type are text", () => {
  const deps = { readList: () => new Set<string>() };
  const filtersOf = (filter: string) => loadFilters(filter).config.platforms.webhook.routes.gh?.filters ?? [];

  it("a number written unquoted keeps its text (1.0 is the text 1.0), as the header sends it", () => {
    const subject = { payload: {}, event: "2.10", headers: { "x-version": "1.0" } };
    for (const filter of [
      "{field: headers.X-Version, equals: 1.0}",
      "{field: headers.X-Version, in: [0.9, 1.0]}",
      "{field: event, equals: 2.10}",
      "{any: [{field: event_type, in: [2.10]}]}",
      "{not: {field: headers.x-version, not_equals: 1.0}}",
      "{field: headers.X-Version, contains: 1.0}",
    ])
      expect(matchesAll(filtersOf(filter), subject, deps), filter).toBe(true);
    expect(matchesAll(filtersOf("{field: headers.X-Version, equals: 1}"), subject, deps)).toBe(false);
  });

  it("a True, Null or ~ written unquoted is the text written (Python's str(True) is True), as YAML 1.1's yes", () => {
    expect(filtersOf("{field: headers.X-Flag, equals: True}")).toEqual([
      { field: "headers.X-Flag", equals: "True" },
    ]);
    expect(filtersOf("{field: event, in: [True, Null, FALSE, ~]}")).toEqual([
      { field: "event", in: ["True", "Null", "FALSE", "~"] },
    ]);
    expect(filtersOf("{any: [{field: event_type, contains: NULL}]}")).toEqual([
      { any: [{ field: "event_type", contains: "NULL" }] },
    ]);
    expect(filtersOf("{field: headers.X-Dry-Run, not_equals: true}")).toEqual([
      { field: "headers.X-Dry-Run", not_equals: true },
    ]);
    expect(
      loadFilters("{field: headers.X-Debug, equals: yes}", "%YAML 1.1\n---\n").config.platforms.webhook.routes
        .gh?.filters,
    ).toEqual([{ field: "headers.X-Debug", equals: "yes" }]);
    const subject = (flag: string) => ({ payload: {}, event: "True", headers: { "x-flag": flag } });
    const header = filtersOf("{field: headers.X-Flag, equals: True}");
    expect(matchesAll(header, subject("True"), deps)).toBe(true);
    expect(matchesAll(header, subject("true"), deps)).toBe(false);
    expect(matchesAll(filtersOf("{field: event, in: [True, Null]}"), subject("x"), deps)).toBe(true);
  });

  it("a payload field still compares numbers by value (1.0 equals 1)", () => {
    expect(filtersOf("{field: version, equals: 1.0}")).toEqual([{ field: "version", equals: 1 }]);
    expect(
      matchesAll(
        filtersOf("{field: version, equals: 1.0}"),
        { payload: { version: 1 }, event: undefined, headers: {} },
        deps,
      ),
    ).toBe(true);
  });
});

/** Routes, one line each under `routes:` (line 5 is the first). */
function loadRoutes(...routes: string[]) {
  home = tempHome();
  const lines = routes.map((route) => `      ${route}\n`).join("");
  home.write("config.yaml", `platforms:\n  webhook:\n    secret: s\n    routes:\n${lines}`);
  return loadConfig({ home: home.dir, env: {} }).config.platforms.webhook.routes;
}

/** The problems loading `routes` (as loadRoutes) is refused with, without the file's name; fails if they load. */
function problems(...routes: string[]): string[] {
  try {
    loadRoutes(...routes);
  } catch (err) {
    return (err as Error).message.split("\n").map((line) => line.replace(/^.*config\.yaml: /, ""));
  }
  throw new Error("loaded");
}

describe("filters written through a merge key", () => {
  const deps = { readList: () => new Set<string>() };
  it("take field from the mapping merged: a header's True, False and 1.0 are the text written", () => {
    const routes = loadRoutes(
      "a: {filters: [&hf {field: headers.X-Flag, equals: True}, &ht {field: headers.X-Tier, in: [x]}]}",
      "b: {filters: [{<<: *hf, equals: False}]}",
      "c: {filters: [{<<: [*hf], equals: 1.0}]}",
      "d: {filters: [{<<: *ht, in: [FALSE, 2.10, ~]}]}",
    );
    expect(routes.a?.filters).toEqual([
      { field: "headers.X-Flag", equals: "True" },
      { field: "headers.X-Tier", in: ["x"] },
    ]);
    expect(routes.b?.filters).toEqual([{ field: "headers.X-Flag", equals: "False" }]);
    expect(routes.c?.filters).toEqual([{ field: "headers.X-Flag", equals: "1.0" }]);
    expect(routes.d?.filters).toEqual([{ field: "headers.X-Tier", in: ["FALSE", "2.10", "~"] }]);
    const subject = (flag: string) => ({ payload: {}, event: "x", headers: { "x-flag": flag } });
    expect(matchesAll(routes.b?.filters ?? [], subject("False"), deps)).toBe(true);
    expect(matchesAll(routes.b?.filters ?? [], subject("false"), deps)).toBe(false);
    expect(matchesAll(routes.c?.filters ?? [], subject("1.0"), deps)).toBe(true);
  });

  it("a merged sequence's first mapping with a field gives it, and the filter's own field wins", () => {
    const routes = loadRoutes(
      "a: {filters: [&hf {field: headers.X-Flag, equals: x}, &pf {field: version, equals: 2}]}",
      "b: {filters: [{<<: [*hf, *pf], equals: True}]}",
      "c: {filters: [{<<: [*pf, *hf], equals: 1.0}]}",
      "e: {filters: [{<<: [*pf, *hf], field: headers.X-Other, equals: 1.0}]}",
    );
    expect(routes.b?.filters).toEqual([{ field: "headers.X-Flag", equals: "True" }]);
    expect(routes.c?.filters).toEqual([{ field: "version", equals: 1 }]);
    expect(routes.e?.filters).toEqual([{ field: "headers.X-Other", equals: "1.0" }]);
  });

  it("a value the merged mapping gives is read as the field of the filter that takes it, the anchor's own as its field reads it", () => {
    const routes = loadRoutes(
      "a: {filters: [&pf {field: version, equals: 1.0}, &hv {field: headers.X-Version, in: [1.0]}]}",
      "b: {filters: [{<<: *pf, field: headers.X-Version}]}",
      "c: {filters: [{<<: *hv, field: version}]}",
    );
    expect(routes.a?.filters).toEqual([
      { field: "version", equals: 1 },
      { field: "headers.X-Version", in: ["1.0"] },
    ]);
    expect(routes.b?.filters).toEqual([{ field: "headers.X-Version", equals: "1.0" }]);
    expect(routes.c?.filters).toEqual([{ field: "version", in: [1] }]);
  });

  it("a payload field merged in refuses a value YAML misreads, at its line, as one written with the field does", () => {
    expect(
      problems(
        "a: {filters: [&pf {field: pull_request.draft, equals: false}, &ps {field: title, contains: x}]}",
        "b: {filters: [{<<: *pf, equals: FALSE}]}",
        "c: {filters: [{<<: *ps, contains: 2.0}]}",
      ),
    ).toEqual([
      "line 6: platforms.webhook.routes.b.filters[0].equals: YAML reads FALSE as the boolean false, not as text — write false to compare with a true/false field, or 'FALSE' in quotes to compare with that text",
      `line 7: platforms.webhook.routes.c.filters[0].contains: YAML reads 2.0 as the number 2, so contains looks for the text "2" in a string, not "2.0" — put it in quotes to look for that text: contains: '2.0' (write 2 to find the number in a list)`,
    ]);
  });

  it("a misread value a header's mapping gives a payload filter is refused at the line it is written on, named under that filter", () => {
    expect(
      problems(
        "a: {filters: [&hv {field: headers.X-Flag, contains: True}]}",
        "b: {filters: [{<<: *hv, field: draft}]}",
      ),
    ).toEqual([
      `line 5 (given to this filter by the merge key << on line 6): platforms.webhook.routes.b.filters[0].contains: YAML reads True as the boolean true, so contains looks for the text "true" in a string, not "True" — put it in quotes to look for that text: contains: 'True' (write true to find the boolean in a list)`,
    ]);
  });

  it("a value refused at the anchor's line is named under each merging filter with the line of its <<", () => {
    expect(
      problems(
        "a: {filters: [&hv {field: headers.X-Flag, in: [True, x]}]}",
        "b: {filters: [{<<: *hv, field: draft}]}",
        "c: {filters: [{<<: *hv, field: draft}]}",
      ),
    ).toEqual([
      "line 5 (given to this filter by the merge key << on line 6): platforms.webhook.routes.b.filters[0].in[0]: YAML reads True as the boolean true, not as text — write true to compare with a true/false field, or 'True' in quotes to compare with that text",
      "line 5 (given to this filter by the merge key << on line 7): platforms.webhook.routes.c.filters[0].in[0]: YAML reads True as the boolean true, not as text — write true to compare with a true/false field, or 'True' in quotes to compare with that text",
    ]);
  });

  it("an inline merge source gives a payload filter the value YAML read, whichever mapping is reached first", () => {
    const routes = loadRoutes(
      "a: {filters: [{<<: &hf {field: headers.X-V, equals: 7}, field: num}]}",
      "b: {filters: [{<<: *hf}]}",
      "c: {filters: [{any: [&g {field: headers.X-W, equals: True}, {<<: *g, equals: False}]}]}",
      "d: {filters: [{<<: &pf {field: num, in: [1.0, 2]}, field: headers.X-N}]}",
    );
    expect(routes.a?.filters).toEqual([{ field: "num", equals: 7 }]);
    expect(routes.b?.filters).toEqual([{ field: "headers.X-V", equals: "7" }]);
    expect(routes.c?.filters).toEqual([
      {
        any: [
          { field: "headers.X-W", equals: "True" },
          { field: "headers.X-W", equals: "False" },
        ],
      },
    ]);
    expect(routes.d?.filters).toEqual([{ field: "headers.X-N", in: ["1.0", "2"] }]);
    expect(matchesAll(routes.a?.filters ?? [], { payload: { num: 7 }, event: "x", headers: {} }, deps)).toBe(
      true,
    );
  });

  it("an inline merge source is no filter of its own: only the filters that take its values judge them", () => {
    // The only filter reads a header: the source's payload field draft, with True, is never used as one.
    const routes = loadRoutes(
      "a: {filters: [{<<: &pf {field: draft, equals: True}, field: headers.X-Draft}]}",
      "b: {filters: [{<<: [&qa {field: num, in: [True, 1.0]}, &qb {field: n, in: [True]}], field: headers.X-Q}]}",
    );
    expect(routes.a?.filters).toEqual([{ field: "headers.X-Draft", equals: "True" }]);
    expect(routes.b?.filters).toEqual([{ field: "headers.X-Q", in: ["True", "1.0"] }]);
    // A filter that merges it as a payload filter is refused, at the source's line, named under that filter.
    expect(
      problems(
        "a: {filters: [{<<: &pf {field: draft, equals: True}, field: headers.X-Draft}]}",
        "b: {filters: [{<<: *pf}]}",
      ),
    ).toEqual([
      "line 5 (given to this filter by the merge key << on line 6): platforms.webhook.routes.b.filters[0].equals: YAML reads True as the boolean true, not as text — write true to compare with a true/false field, or 'True' in quotes to compare with that text",
    ]);
    // Given whole to a filters list by an alias, it is a filter where it is written.
    expect(
      problems(
        "a: {filters: [{<<: &pf {field: draft, equals: True}, field: headers.X-Draft}]}",
        "b: {filters: [*pf]}",
      ),
    ).toEqual([
      "line 5: platforms.webhook.routes.a.filters[0].<<.equals: YAML reads True as the boolean true, not as text — write true to compare with a true/false field, or 'True' in quotes to compare with that text",
    ]);
  });
});

describe("filters nested in a merge source (not, any, all)", () => {
  const deps = { readList: () => new Set<string>() };
  it("are filters of their own: a header's 1.0 and True are the text written, inline, by an alias and in a merged list", () => {
    const routes = loadRoutes(
      "a: {filters: [{<<: &nodraft {not: {field: headers.X-Version, equals: 1.0}}}]}",
      "b: {filters: [{<<: *nodraft}]}",
      "c: {filters: [{<<: {any: [{field: headers.X-A, in: [1.0, True]}, {all: [{field: event, equals: 2.10}]}]}}]}",
      "d: {filters: [{<<: [{not: {field: headers.X-B, equals: True}}, {not: {field: y, in: [1.0]}}]}]}",
      "e: {filters: [*nodraft]}",
    );
    const nodraft = [{ not: { field: "headers.X-Version", equals: "1.0" } }];
    expect(routes.a?.filters).toEqual(nodraft);
    expect(routes.b?.filters).toEqual(nodraft);
    expect(routes.e?.filters).toEqual(nodraft);
    expect(routes.c?.filters).toEqual([
      { any: [{ field: "headers.X-A", in: ["1.0", "True"] }, { all: [{ field: "event", equals: "2.10" }] }] },
    ]);
    expect(routes.d?.filters).toEqual([{ not: { field: "headers.X-B", equals: "True" } }]);
    const version = (v: string) => ({ payload: { a: 1 }, event: "x", headers: { "x-version": v } });
    expect(matchesAll(routes.a?.filters ?? [], version("1.0"), deps)).toBe(false);
    expect(matchesAll(routes.a?.filters ?? [], version("1"), deps)).toBe(true);
  });

  it("a payload value YAML misreads inside one is refused at its line, as it is written in a filters list", () => {
    expect(
      problems(
        "a: {filters: [{<<: &n {not: {field: draft, equals: True}}}]}",
        "b: {filters: [{<<: [{any: [{field: title, contains: 2.0}]}]}]}",
        "c: {filters: [{<<: *n}, *n]}",
      ),
    ).toEqual([
      "line 5: platforms.webhook.routes.a.filters[0].<<.not.equals: YAML reads True as the boolean true, not as text — write true to compare with a true/false field, or 'True' in quotes to compare with that text",
      `line 6: platforms.webhook.routes.b.filters[0].<<[0].any[0].contains: YAML reads 2.0 as the number 2, so contains looks for the text "2" in a string, not "2.0" — put it in quotes to look for that text: contains: '2.0' (write 2 to find the number in a list)`,
    ]);
  });

  it("a group a filters list gives by an alias has its members checked wherever the anchor is written", () => {
    home = tempHome();
    home.write(
      "config.yaml",
      [
        "x-filters: &pf {not: {any: [{field: draft, equals: True}]}}",
        "platforms:",
        "  webhook:",
        "    secret: s",
        "    routes:",
        "      a: {filters: [*pf]}",
        "",
      ].join("\n"),
    );
    expect(() => loadConfig({ home: home?.dir as string, env: {} })).toThrow(
      "line 1: x-filters.not.any[0].equals: YAML reads True as the boolean true",
    );
  });
});

describe("filters whose field or value is an alias", () => {
  it("a field given by an alias is read as that field: a header's True is the text written", () => {
    const routes = loadRoutes(
      "f: {filters: [{field: &hf headers.X-Z, equals: True}]}",
      "g: {filters: [{field: *hf, equals: True}, {field: *hf, in: [1.0]}]}",
    );
    expect(routes.f?.filters).toEqual([{ field: "headers.X-Z", equals: "True" }]);
    expect(routes.g?.filters).toEqual([
      { field: "headers.X-Z", equals: "True" },
      { field: "headers.X-Z", in: ["1.0"] },
    ]);
  });

  it("a value given by an alias is read by the field of the filter it is written in", () => {
    const routes = loadRoutes(
      "d: {filters: [{field: headers.X-V, equals: &v 1.0}, {field: headers.X-V, in: [&w True]}]}",
      "e: {filters: [{field: version, equals: *v}]}",
      "h: {filters: [{field: headers.X-Y, in: [*v, *w]}]}",
      "p: {filters: [{field: version, equals: &n 2.10}]}",
      "q: {filters: [{field: headers.X-Q, equals: *n}]}",
    );
    expect(routes.d?.filters).toEqual([
      { field: "headers.X-V", equals: "1.0" },
      { field: "headers.X-V", in: ["True"] },
    ]);
    expect(routes.e?.filters).toEqual([{ field: "version", equals: 1 }]);
    expect(routes.h?.filters).toEqual([{ field: "headers.X-Y", in: ["1.0", "True"] }]);
    expect(routes.q?.filters).toEqual([{ field: "headers.X-Q", equals: "2.10" }]);
  });

  it("a list given by an alias, and a value merged through a mapping that merges it, are read by the filter that takes them", () => {
    const routes = loadRoutes(
      "d: {filters: [{field: headers.X-L, in: &l [1.0, 2]}]}",
      "e: {filters: [{field: num, in: *l}]}",
      "h: {filters: [&h {field: headers.X-A, equals: 1.0}, &f {<<: *h, field: num}, {<<: *f, field: headers.X-B}]}",
    );
    expect(routes.d?.filters).toEqual([{ field: "headers.X-L", in: ["1.0", "2"] }]);
    expect(routes.e?.filters).toEqual([{ field: "num", in: [1, 2] }]);
    expect(routes.h?.filters).toEqual([
      { field: "headers.X-A", equals: "1.0" },
      { field: "num", equals: 1 },
      { field: "headers.X-B", equals: "1.0" },
    ]);
  });

  it("a misread value given by an alias to a payload filter is refused, as one written there is", () => {
    expect(
      problems(
        "d: {filters: [{field: headers.X-V, equals: &v True}]}",
        "e: {filters: [{field: draft, equals: *v}]}",
        "f: {filters: [{field: draft, in: [x, *v]}]}",
      ),
    ).toEqual([
      "line 5 (given to this filter by *v on line 6): platforms.webhook.routes.e.filters[0].equals: YAML reads True as the boolean true, not as text — write true to compare with a true/false field, or 'True' in quotes to compare with that text",
      "line 5 (given to this filter by *v on line 7): platforms.webhook.routes.f.filters[0].in[1]: YAML reads True as the boolean true, not as text — write true to compare with a true/false field, or 'True' in quotes to compare with that text",
    ]);
  });

  it("an id given by an alias, or given to a filter, is text where svc reads ids and a number in a payload filter", () => {
    const routes = loadRoutes(
      "a: {secret: s, prompt: x, deliver: slack, deliver_extra: {chat_id: &chat 42}}",
      "b: {filters: [{field: chat.id, equals: *chat}]}",
      "c: {filters: [{field: ts, in: [&ts 1700000000.000100]}]}",
      "d: {secret: s, prompt: x, deliver: slack, deliver_extra: {chat_id: C1, thread_ts: *ts}}",
      "e: {filters: [{field: ts, equals: *ts}]}",
    );
    expect(routes.a?.deliver_extra).toEqual({ chat_id: "42" });
    expect(routes.b?.filters).toEqual([{ field: "chat.id", equals: 42 }]);
    expect(routes.c?.filters).toEqual([{ field: "ts", in: [1700000000.0001] }]);
    expect(routes.d?.deliver_extra).toEqual({ chat_id: "C1", thread_ts: "1700000000.000100" });
    expect(routes.e?.filters).toEqual([{ field: "ts", equals: 1700000000.0001 }]);
  });
});
