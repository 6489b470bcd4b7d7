import { describe, expect, it } from "vitest";
import { displayWidth, formatTable } from "../../../src/cli/format.js";

describe("formatTable", () => {
  it("lines columns up as a terminal shows them: CJK and emoji two columns, a letter with its accent one", () => {
    const rows = [
      ["NAME", "EVENTS", "DELIVER"],
      ["ascii", "push,pull_request", "log"],
      ["cjk", "Überweisung,プッシュ", "log"],
      ["emoji", "deploy🚀", "telegram"],
      // U+0308 combining diaeresis: two code units, one column.
      ["accent", "U\u0308berweisung", "slack"],
    ];
    // The EVENTS column is 20 terminal columns wide (the CJK cell's 12 letters and 4 wide ones).
    expect(formatTable(rows).split("\n")).toEqual([
      `NAME    EVENTS${" ".repeat(16)}DELIVER`,
      `ascii   push,pull_request${" ".repeat(5)}log`,
      "cjk     Überweisung,プッシュ  log",
      `emoji   deploy🚀${" ".repeat(14)}telegram`,
      `accent  U\u0308berweisung${" ".repeat(11)}slack`,
    ]);
  });

  it("ends each line at its last non-empty cell: an empty last column leaves no trailing spaces", () => {
    const rows = [
      ["ID", "ANSWER", "NOTE"],
      ["redelivery-1", "202 accepted", "redelivery of d-1"],
      ["d-1", "202 accepted", ""],
      ["d-2", "", ""],
    ];
    expect(formatTable(rows).split("\n")).toEqual([
      "ID            ANSWER        NOTE",
      "redelivery-1  202 accepted  redelivery of d-1",
      "d-1           202 accepted",
      "d-2",
    ]);
  });

  it("shows a cell's controls as a space (C1 ones too: U+009B is a terminal's CSI) and its bidi or zero-width characters escaped, so no cell can clear the screen or reorder its row", () => {
    const rows = [
      ["NAME", "DESCRIPTION"],
      ["a", "line\nbreak \u001b[2Jesc \u009b2Jcsi"],
      ["b", "invoice \u202egnp.exe hid\u200bden"],
    ];
    expect(formatTable(rows).split("\n")).toEqual([
      "NAME  DESCRIPTION",
      "a     line break  [2Jesc  2Jcsi",
      "b     invoice \\u202egnp.exe hid\\u200bden",
    ]);
  });

  it("measures plain text by its length, wide characters as two columns", () => {
    expect(displayWidth("pull_request")).toBe(12);
    expect(displayWidth("プッシュ")).toBe(8);
    expect(displayWidth("日本語")).toBe(6);
    expect(displayWidth("🇩🇪")).toBe(2);
    expect(displayWidth("❤️")).toBe(2);
    expect(displayWidth("e\u0301")).toBe(1);
  });
});
