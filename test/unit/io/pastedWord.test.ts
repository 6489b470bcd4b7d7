import { spawnSync } from "node:child_process";
import { expect, it } from "vitest";
import { pastedWord } from "../../../src/io/shellWord.js";

/**
 * docs/mcp.md: a command svc suggests gives a name with control or invisible characters as bash reads it
 * back. A character from U+0080 up is escaped as its code point (`\u00ad`), which bash reads as that
 * character's UTF-8; `\xad` would be one raw byte, another name.
 */
const names = [
  "a\u00adb", // soft hyphen
  "x\u0085y\u009bz", // C1 controls (NEL, CSI)
  "e\u001b]0;x\u0007Z", // below U+0080: \x1b, \x07
  "q'\\\u0080", // a quote and a backslash beside U+0080
  "z\u200bw\u2028", // zero-width space, line separator
  "t\u{e0001}g", // a tag character past U+FFFF
  "\u00ff\u00a0plain", // U+00FF is no control: as it is
];

it.each(names)("bash reads the pasted word back as the name (%j)", (name) => {
  const word = pastedWord(name);
  const res = spawnSync("bash", ["-c", `printf %s ${word}`], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", LC_ALL: "C.UTF-8" },
  });
  expect(res.status).toBe(0);
  expect((res.stdout as Buffer).toString("hex")).toBe(Buffer.from(name).toString("hex"));
});

it("escapes below U+0080 as \\xHH and from U+0080 up as \\uHHHH", () => {
  expect(pastedWord("a\u00adb")).toBe("$'a\\u00adb'");
  expect(pastedWord("e\u001bZ")).toBe("$'e\\x1bZ'");
});
