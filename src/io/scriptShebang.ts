import { basename, dirname, extname, join } from "node:path";
import { scriptFirstLine } from "./executable.js";
import { interpreterFor } from "./scripts.js";

/**
 * The program a `#!` line asks for, by name: `node` for `#!/usr/bin/env node`, `bash` for `#!/bin/bash -e`,
 * `python3` for `#!/usr/bin/env -S PYTHONUTF8=1 python3 -u` (env's options and `NAME=value` come first).
 */
export function shebangProgram(line: string): string | undefined {
  const words = line
    .slice(2)
    .trim()
    .split(/\s+/)
    .filter((word) => word !== "");
  const first = words[0];
  if (first === undefined || basename(first) !== "env")
    return first === undefined ? undefined : basename(first);
  let at = 1;
  while (at < words.length) {
    const word = words[at] as string;
    if (word === "-u" || word === "--unset") at += 2;
    else if (word.startsWith("-") || word.includes("=")) at += 1;
    else break;
  }
  const program = words[at];
  return program === undefined ? undefined : basename(program);
}

/** Programs that run what the interpreter svc picks runs: POSIX sh scripts under bash, any Python under python3. */
function sameKind(program: string, runner: "bash" | "python3"): boolean {
  return runner === "bash" ? /^(?:ba|da)?sh$/.test(program) : /^(?:python|pypy)[0-9.]*$/.test(program);
}

/**
 * Why the route script at `path` (`script` as the route names it) will not run as its author meant: its `#!`
 * line asks for another program than the one svc runs it with (bash for `.sh` and `.bash`, python3 for every
 * other name), with what to do. Undefined when the line agrees, or there is none.
 */
export function shebangMismatch(path: string, script: string): string | undefined {
  const line = scriptFirstLine(path);
  const program = line === undefined ? undefined : shebangProgram(line.trimEnd());
  if (program === undefined) return undefined;
  const runner = interpreterFor(path);
  if (sameKind(program, runner)) return undefined;
  const said = `its #! line asks for ${program}, but svc runs it with ${runner} (.sh and .bash files with bash, every other file with python3), so each event is ignored while ${runner} cannot run it`;
  const renamed = (ext: string) => {
    const name = `${basename(script, extname(script))}${ext}`;
    return `rename it to ${name} and write script: ${join(dirname(script), name)}`;
  };
  if (runner === "python3" && sameKind(program, "bash")) return `${said} — ${renamed(".sh")}`;
  if (runner === "bash" && sameKind(program, "python3")) return `${said} — ${renamed(".py")}`;
  return `${said} — call it from a .sh script beside it: exec ${program} "$(dirname "$0")/${basename(path)}"`;
}
