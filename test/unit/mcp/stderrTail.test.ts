import { describe, expect, it } from "vitest";
import { joinStderr, keepStderrLine, STDERR_TAIL_LINES } from "../../../src/io/stderrTail.js";

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
      "Error: Cannot find module '/srv/missing.js' |     at Module._resolveFilename (node:internal/modules/cjs/loader:1207:15) |   code: 'MODULE_NOT_FOUND', |   requireStack: [] | }",
    );
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
