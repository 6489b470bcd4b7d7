import { utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createListReader, listFileProblem, parseList } from "../../../src/io/listFiles.js";
import { matches } from "../../../src/streams/filters.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome | undefined;
afterEach(() => home?.cleanup());

describe("parseList", () => {
  it("reads a JSON array's items, a JSON object's keys, or non-empty trimmed lines", () => {
    expect([...parseList('["a", 2, true, null]')]).toEqual(["a", "2", "true", "null"]);
    expect([...parseList('{"alice": 1, "bob": {"x": 1}}')]).toEqual(["alice", "bob"]);
    expect([...parseList("  alice \r\n\n bob\n\n")]).toEqual(["alice", "bob"]);
    expect([...parseList("[bot] one\nsecond")]).toEqual(["[bot] one", "second"]);
    expect([...parseList('"just a string"')]).toEqual(['"just a string"']);
  });

  it("keeps lines starting with # as entries (no comment syntax) and splits CRLF, LF and lone CR line ends", () => {
    expect([...parseList("#general\r\nalice\r\n  #random \nbob\rcarol\r\n#\n")]).toEqual([
      "#general",
      "alice",
      "#random",
      "bob",
      "carol",
      "#",
    ]);
    // In a JSON list a leading # is part of the value.
    expect([...parseList('["#general", "ops"]')]).toEqual(["#general", "ops"]);
  });

  it("a .json file must be a JSON array or object (a syntax error throws); other files fall back to lines", () => {
    expect([...parseList('["a", "b"]', "/x/allow.JSON")]).toEqual(["a", "b"]);
    expect(() => parseList('["dependabot[bot]", "snyk-bot",]', "/x/bots.json")).toThrow(/not valid JSON/);
    expect(() => parseList('"alice"', "/x/one.json")).toThrow(/must be a JSON array or object/);
    expect(() => parseList("", "/x/empty.json")).toThrow(/not valid JSON/);
    expect([...parseList('["a", "b",]', "/x/bots.txt")]).toEqual(['["a", "b",]']);
  });

  it("keeps a JSON list's numbers as written (1.0 also as 1; a 64-bit id only as its exact digits)", () => {
    expect([...parseList('[1.0, 2, 1234567890123456789012, "x"]', "/x/ids.json")]).toEqual([
      "1.0",
      "1",
      "2",
      "1234567890123456789012",
      "x",
    ]);
  });
});

describe("createListReader (in_file cache)", () => {
  it("resolves relative paths against baseDir", () => {
    home = tempHome();
    home.write("lists/bots.txt", "dependabot[bot]\n");
    const reader = createListReader({ baseDir: home.dir });
    expect(reader.readList("lists/bots.txt").has("dependabot[bot]")).toBe(true);
  });

  it("serves the cached list until the file's size, mtime or change time changes", () => {
    home = tempHome();
    const path = home.write("allow.json", '["a"]');
    const reader = createListReader({ baseDir: home.dir });
    const first = reader.readList("allow.json");
    expect(reader.readList(path)).toBe(first);

    home.write("allow.json", '["b"]');
    const fixed = new Date("2026-01-01T00:00:00Z");
    utimesSync(path, fixed, fixed);
    const second = reader.readList("allow.json");
    expect(second.has("b")).toBe(true);
    // Nothing changed since: the cached list is served.
    expect(reader.readList("allow.json")).toBe(second);
    // A same-size edit in place whose mtime is set back (touch -r, a tool keeping timestamps) keeps inode,
    // size and mtime; its change time, which no one can set back, moved: the edit is seen.
    home.write("allow.json", '["c"]');
    utimesSync(path, fixed, fixed);
    expect([...reader.readList("allow.json")]).toEqual(["c"]);

    home.write("allow.json", '["c", "d"]');
    utimesSync(path, fixed, fixed);
    expect([...reader.readList("allow.json")]).toEqual(["c", "d"]);
  });

  it("throws for a missing file or a directory, and a filter using it does not match", () => {
    home = tempHome();
    home.write("dir/x.txt", "x");
    const reader = createListReader({ baseDir: home.dir });
    expect(() => reader.readList("nope.txt")).toThrow();
    expect(() => reader.readList("dir")).toThrow(/not a regular file/);
    const subject = { payload: { user: "x" }, event: undefined, headers: {} };
    expect(matches({ field: "user", in_file: "nope.txt" }, subject, reader)).toBe(false);
    expect(matches({ field: "user", in_file: "dir/x.txt" }, subject, reader)).toBe(true);
  });

  it("reports an unusable list once until it is usable again, then again if it breaks", () => {
    home = tempHome();
    const reports: string[] = [];
    const reader = createListReader({
      baseDir: home.dir,
      onUnreadable: (file, problem) => reports.push(`${file}: ${problem}`),
    });
    const file = `${home.dir}/bots.json`;
    for (let i = 0; i < 3; i++) expect(() => reader.readList("bots.json")).toThrow();
    expect(reports).toEqual([expect.stringMatching(/^.*\/bots\.json: ENOENT/)]);
    home.write("bots.json", '["a",]');
    expect(() => reader.readList("bots.json")).toThrow();
    expect(reports).toHaveLength(1);
    home.write("bots.json", '["a"]');
    expect([...reader.readList("bots.json")]).toEqual(["a"]);
    home.write("bots.json", '["a", "b",]');
    expect(() => reader.readList(file)).toThrow();
    expect(() => reader.readList(file)).toThrow();
    expect(reports).toHaveLength(2);
    expect(reports[1]).toMatch(/bots\.json: not valid JSON/);
  });

  it("a list saved as UTF-16 or in Latin-1 cannot be used, naming why: a blocklist under not ignores events, not lets them through", () => {
    home = tempHome();
    // PowerShell 5's `>` writes UTF-16 with a byte order mark: read as UTF-8, every entry had NULs between its
    // letters, so nothing was blocked; a Latin-1 `café` was `caf\uFFFD`, matching no sender's text.
    writeFileSync(join(home.dir, "blocked.txt"), Buffer.from("\ufeffspammer\r\n", "utf16le"));
    writeFileSync(
      join(home.dir, "allow.txt"),
      Buffer.concat([Buffer.from("alice\n"), Buffer.from("café\n", "latin1")]),
    );
    const reports: string[] = [];
    const reader = createListReader({
      baseDir: home.dir,
      onUnreadable: (file, problem) => reports.push(`${file}: ${problem}`),
    });
    const subject = (user: string) => ({ payload: { user }, event: undefined, headers: {} });
    expect(matches({ not: { field: "user", in_file: "blocked.txt" } }, subject("spammer"), reader)).toBe(
      false,
    );
    expect(matches({ field: "user", in_file: "allow.txt" }, subject("alice"), reader)).toBe(false);
    expect(reports).toEqual([
      `${join(home.dir, "blocked.txt")}: saved as UTF-16 — save it as UTF-8 (in PowerShell: Set-Content -Encoding utf8, or Out-File -Encoding utf8)`,
      `${join(home.dir, "allow.txt")}: line 2: not UTF-8 text — save the file as UTF-8 (in another encoding, such as Latin-1 or Windows-1252, a character like é is read as one no sender uses)`,
    ]);
    // The startup check names it the same way.
    expect(listFileProblem("allow.txt", home.dir).problem).toMatch(/^line 2: not UTF-8 text/);
    // Saved again as UTF-8 (a byte order mark is fine), it is read.
    writeFileSync(join(home.dir, "allow.txt"), "\ufeffalice\ncafé\n");
    expect(matches({ field: "user", in_file: "allow.txt" }, subject("café"), reader)).toBe(true);
    expect(listFileProblem("allow.txt", home.dir).problem).toBeUndefined();
  });
});
