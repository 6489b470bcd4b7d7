import { accessSync, closeSync, constants, existsSync, openSync, readSync, statSync } from "node:fs";
import { delimiter, join, resolve } from "node:path";
import { describe, type WrittenAs } from "../config/describe.js";

/**
 * Why the file at `path` cannot be started as a program, or undefined when it can. `shown`: how the fix names
 * the file (its path unless told).
 */
function programFileProblem(path: string, shown = path): string | undefined {
  try {
    if (!statSync(path).isFile()) return "is not a file";
    accessSync(path, constants.X_OK);
    return undefined;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return "does not exist";
    if (code === "EACCES") return `is not executable (chmod +x ${shown})`;
    return `cannot be read (${code ?? "error"})`;
  }
}

/**
 * Why `file` (an argv's first entry, started without a shell) cannot be started, looked up as a process
 * start looks it up: a name with a `/` as a path from the working directory, any other name in each
 * directory of `PATH`. Undefined when it can be started. `given`: the file's text, when a `${VAR}` of
 * config.yaml gave the name, which is then named as that text, never as the value.
 */
export function executableProblem(
  file: string,
  path = process.env.PATH ?? "",
  given?: WrittenAs,
): string | undefined {
  const shown = given === undefined ? JSON.stringify(file) : describe(given);
  if (file.includes("/")) {
    const problem = programFileProblem(resolve(file), given === undefined ? resolve(file) : "<the file>");
    return problem === undefined ? undefined : `${shown} ${problem}`;
  }
  return programOnPath(file, path) === undefined ? `${shown} was not found on PATH` : undefined;
}

/** Where a process start finds the program `file` (a name without `/`) in the directories of `path`, if anywhere. */
export function programOnPath(file: string, path: string): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (dir !== "" && programFileProblem(join(dir, file)) === undefined) return join(dir, file);
  }
  return undefined;
}

/** The `#!` line of a script (its text up to the first line feed, a carriage return kept), or undefined. */
export function scriptFirstLine(file: string): string | undefined {
  const head = Buffer.alloc(256);
  let length: number;
  try {
    const fd = openSync(file, "r");
    try {
      length = readSync(fd, head, 0, head.length, 0);
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
  const text = head.subarray(0, length).toString("latin1");
  return text.startsWith("#!") ? (text.split("\n", 1)[0] as string) : undefined;
}

/**
 * A script whose `#!` line ends in a carriage return (saved with Windows line endings): the system, or
 * `/usr/bin/env`, looks for an interpreter whose name ends in it, which no machine has.
 */
export function crlfScript(file: string): boolean {
  return scriptFirstLine(file)?.endsWith("\r") === true;
}

/** What to do about a script saved with Windows line endings (`crlfScript`). */
export function crlfScriptFix(file: string): string {
  return `save it with Unix line endings (dos2unix ${file})`;
}

/**
 * Why a program file that exists and may be executed still could not be started (the system said "no such
 * file"): the interpreter its `#!` line names is missing — a path from another machine, or `#!/bin/sh` with
 * the carriage return of a file saved with Windows line endings — or, for a binary, its loader (a build for
 * another system). Undefined when the file cannot be read, or when the interpreter it names is there.
 * `hidden`: the file's path came from a value a `${VAR}` gave, so it is named "the file" (a fix to paste as
 * `<the file>`), never by its path.
 */
export function missingInterpreter(file: string, hidden = false): string | undefined {
  if (!existsSync(file)) return undefined;
  const named = hidden ? "the file" : file;
  const line = scriptFirstLine(file);
  if (line === undefined)
    return `${named} exists, but the system found no loader for it (a program built for another system or architecture?)`;
  const interpreter = line.slice(2).trim().split(/\s+/)[0] ?? "";
  if (line.endsWith("\r"))
    return `${named} exists, but its first line ends with a carriage return (the file was saved with Windows line endings), so the system looks for an interpreter named "${interpreter}\\r" — ${crlfScriptFix(hidden ? "<the file>" : file)}`;
  // An interpreter that is there failed for a reason of its own (itself a script whose interpreter is missing).
  if (programFileProblem(interpreter) === undefined) return undefined;
  return `${named} exists, but the interpreter its #! line names, ${interpreter}, is not on this machine — install it, or correct the #! line (#!/usr/bin/env <name> finds it on PATH)`;
}

/** The file a process start runs for `command`: a name with a `/` from `cwd`, any other name found on `path`. */
export function programFile(command: string, path: string, cwd?: string): string | undefined {
  return command.includes("/") ? resolve(cwd ?? ".", command) : programOnPath(command, path);
}

/**
 * A command the system reported as not found (ENOENT) although its file is there and may be executed: what
 * is missing is its interpreter or loader (`missingInterpreter`). Undefined when the file is not there, so
 * "not found" is right. `hidden`: a `${VAR}` gave `command`, so the file is not named by its path.
 */
export function interpreterProblem(
  command: string,
  path: string,
  cwd?: string,
  hidden = false,
): string | undefined {
  const file = programFile(command, path, cwd);
  if (file === undefined || programFileProblem(file) !== undefined) return undefined;
  return missingInterpreter(file, hidden);
}

/**
 * Why the script `command` names cannot start although its file is there (its `#!` line names a missing
 * interpreter, or ends in a carriage return): known before any start, unlike a binary's missing loader.
 * `hidden`: a `${VAR}` gave `command`, so the file is not named by its path (`interpreterProblem`).
 */
export function scriptInterpreterProblem(command: string, path: string, hidden = false): string | undefined {
  const file = programFile(command, path);
  return file === undefined || scriptFirstLine(file) === undefined
    ? undefined
    : interpreterProblem(file, path, undefined, hidden);
}
