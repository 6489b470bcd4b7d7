import { describe, expect, it } from "vitest";
import { shebangProgram } from "../../../src/io/scriptShebang.js";

describe("shebangProgram: the program a route script's #! line asks for", () => {
  it("is the interpreter's name, with or without a space after #! and with its arguments", () => {
    expect(shebangProgram("#!/bin/bash -e")).toBe("bash");
    expect(shebangProgram("#! /usr/local/bin/python3.12")).toBe("python3.12");
    expect(shebangProgram("#!node")).toBe("node");
  });

  it("is the program /usr/bin/env runs, past env's options and NAME=value words", () => {
    expect(shebangProgram("#!/usr/bin/env node")).toBe("node");
    expect(shebangProgram("#!/usr/bin/env -S python3 -u")).toBe("python3");
    expect(shebangProgram("#!/usr/bin/env -u PYTHONPATH PYTHONUTF8=1 python3")).toBe("python3");
    expect(shebangProgram("#!/bin/env --split-string=x bash")).toBe("bash");
  });

  it("is undefined for a line that names no program", () => {
    expect(shebangProgram("#!")).toBeUndefined();
    expect(shebangProgram("#!   ")).toBeUndefined();
    expect(shebangProgram("#!/usr/bin/env")).toBeUndefined();
    expect(shebangProgram("#!/usr/bin/env -S")).toBeUndefined();
  });
});
