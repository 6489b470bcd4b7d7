import { describe, expect, it } from "vitest";
import { joinStderr, keepStderrLine, STDERR_TAIL_LINES, stderrTail } from "../../../src/io/stderrTail.js";

const tailOf = (lines: readonly string[]) => {
  const tail: string[] = [];
  for (const line of lines) keepStderrLine(tail, line);
  return tail;
};

describe("the stderr lines a stdio server's failure quotes", () => {
  it("a Node.js server that throws: its error line is kept, not pushed out by the stack and the version line", () => {
    // What node prints for `node missing.js` (blank lines are never kept).
    const tail = tailOf([
      "node:internal/modules/cjs/loader:1210",
      "  throw err;",
      "  ^",
      "Error: Cannot find module '/srv/missing.js'",
      "    at Module._resolveFilename (node:internal/modules/cjs/loader:1207:15)",
      "    at Module._load (node:internal/modules/cjs/loader:1038:27)",
      "    at Function.executeUserEntryPoint [as runMain] (node:internal/modules/run_main:164:12)",
      "    at node:internal/main/run_main_module:28:49 {",
      "  code: 'MODULE_NOT_FOUND',",
      "  requireStack: []",
      "}",
      "Node.js v20.20.2",
    ]);
    expect(joinStderr(tail)).toBe(
      "  throw err; |   ^ | Error: Cannot find module '/srv/missing.js' |     at Module._resolveFilename (node:internal/modules/cjs/loader:1207:15) | { code: 'MODULE_NOT_FOUND', requireStack: [] }",
    );
  });

  it("a system error's block of fields after the frames is one line: the error line is not pushed out", () => {
    // What node prints for a server reading a file that is not there.
    const frames = [
      "    at Object.openSync (node:fs:573:18)",
      "    at Object.readFileSync (node:fs:452:35)",
      "    at Object.<anonymous> (/srv/server.js:1:19)",
      "    at node:internal/main/run_main_module:28:49 {",
    ];
    const fields = [
      "  errno: -2,",
      "  code: 'ENOENT',",
      "  syscall: 'open',",
      "  path: '/srv/config.json'",
      "}",
    ];
    const error = "Error: ENOENT: no such file or directory, open '/srv/config.json'";
    expect(
      tailOf(["node:fs:573", "  return binding.open(", "^", error, ...frames, ...fields, "Node.js v20.20.2"]),
    ).toEqual([
      "  return binding.open(",
      "^",
      error,
      frames[0],
      "{ errno: -2, code: 'ENOENT', syscall: 'open', path: '/srv/config.json' }",
    ]);
    // One frame only: it is kept without its " {"; a long block is cut, its end still said.
    const long = Array.from({ length: 40 }, (_, i) => `  field${i}: 'value ${i}',`);
    const [one] = tailOf([error, "    at f (/srv/a.js:1:1) {", ...long, "}"]).slice(2);
    expect(tailOf([error, "    at f (/srv/a.js:1:1) {", ...long, "}"]).slice(0, 2)).toEqual([
      error,
      "    at f (/srv/a.js:1:1)",
    ]);
    expect(one).toMatch(/^\{ field0: 'value 0', .* … \}$/);
    expect(one?.length).toBeLessThanOrEqual(204);
    // A block that never closes ends at the next line that is not indented, kept as it comes.
    expect(tailOf([error, "    at f (/srv/a.js:1:1) {", "  code: 'X',", "retrying"])).toEqual([
      error,
      "    at f (/srv/a.js:1:1)",
      "{ code: 'X',",
      "retrying",
    ]);
  });

  it("a system error with no frames (thrown from an fs callback): its line ending in ' {' keeps the error line, the block of fields one line", () => {
    // What `node -e "require('fs').readFile('/nope/x', (e)=>{ throw e })"` prints.
    const stderr = [
      "[eval]:1",
      "require('fs').readFile('/nope/x', (e)=>{ throw e })",
      "                                         ^",
      "",
      "[Error: ENOENT: no such file or directory, open '/nope/x'] {",
      "  errno: -2,",
      "  code: 'ENOENT',",
      "  syscall: 'open',",
      "  path: '/nope/x'",
      "}",
      "",
      "Node.js v20.20.2",
      "",
    ].join("\n");
    expect(stderrTail(stderr)).toBe(
      "[eval]:1 | require('fs').readFile('/nope/x', (e)=>{ throw e }) |                                          ^ | [Error: ENOENT: no such file or directory, open '/nope/x'] | { errno: -2, code: 'ENOENT', syscall: 'open', path: '/nope/x' }",
    );
    // An error line with no brackets (an error whose stack is its message alone) alike.
    expect(tailOf(["a", "b", "TypeError: x {", "  code: 'X'", "}"])).toEqual([
      "a",
      "b",
      "TypeError: x",
      "{ code: 'X' }",
    ]);
    // An error whose message ends in " {", its frames after it: kept as it comes, the first frame with it.
    expect(tailOf(["Error: unexpected {", "    at f (/srv/a.js:1:1)", "    at g (/srv/a.js:2:1)"])).toEqual([
      "Error: unexpected {",
      "    at f (/srv/a.js:1:1)",
    ]);
    // A line of a server's own ending in " {" that is no error line is kept as it comes.
    expect(tailOf(["config: {", "  a: 1", "}"])).toEqual(["config: {", "  a: 1", "}"]);
  });

  it("other lines as they come, the last five", () => {
    const lines = ["a", "b", "c", "d", "e", "f", "Traceback (most recent call last):", "ValueError: x"];
    expect(tailOf(lines)).toEqual(lines.slice(-STDERR_TAIL_LINES));
    // A frame after a line of another kind is kept: one run of frames shows its first.
    expect(
      tailOf(["Error: x", "    at f (a.js:1:1)", "    at g (a.js:2:1)", "retrying", "    at h (a.js:3:1)"]),
    ).toEqual(["Error: x", "    at f (a.js:1:1)", "retrying", "    at h (a.js:3:1)"]);
  });
});
