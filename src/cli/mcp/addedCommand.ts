import { existsSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { executableProblem } from "../../io/executable.js";
import { shellAssignmentName } from "../../io/shellAssignment.js";

/** A command server's entry as `svc mcp add` writes it. */
export interface AddedCommand {
  readonly command: string;
  readonly args: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * Whether `word` (an argument of the command) is a path relative to the directory `svc mcp add`
 * runs in: `./x`, `../x`, `.`, or a path with a `/` or a file extension that is there (`dist/index.js`,
 * `server.py`). Not an option, a URL, a `~` or `${VAR}` (svc expands both), nor a bare word such as a
 * package name, which may only happen to name a directory here.
 */
function relativePath(word: string, cwd: string | undefined): boolean {
  if (
    cwd === undefined ||
    word === "" ||
    isAbsolute(word) ||
    /^[-~]/.test(word) ||
    word.includes("${") ||
    word.includes("://")
  )
    return false;
  if (/^\.\.?(?:\/|$)/.test(word)) return true;
  return (word.includes("/") || /\.\w+$/.test(word)) && existsSync(resolve(cwd, word));
}

/** The working directory, or undefined when it is gone (removed under the shell): nothing is relative then. */
function currentDirectory(): string | undefined {
  try {
    return process.cwd();
  } catch {
    return undefined;
  }
}

/**
 * Why a `command` that is a whole command line (`npx -y pkg --api-key <key>`, as some clients' configs and
 * install links write it) or starts with a shell's `NAME=value` cannot be started: a process start takes it as
 * one program name. Names the program and the variable, never another word (one may be a key). Undefined for
 * a command of one word.
 */
function commandLineProblem(command: string): string | undefined {
  const [first = "", ...rest] = command.trim().split(/\s+/);
  const variable = shellAssignmentName(first);
  if (variable !== undefined)
    return `starts with ${variable}=..., how a shell sets a variable, and no shell runs command — the gateway starts, but every connect of this server fails: write the program alone as command and ${variable} under env (as \${${variable}}, its value in .env)`;
  if (rest.length === 0) return undefined;
  const words = rest.length === 1 ? "1 more word" : `${rest.length} more words`;
  return `is a whole command line (${JSON.stringify(first)} and ${words}), which is started as one program name, not split into words — the gateway starts, but every connect of this server fails: write the program alone as command and each other word as an item of args`;
}

/**
 * What `svc config check` says of an entry's `command` written as a whole command line, or starting with a
 * shell's `NAME=value`, as `svc mcp add` says it (naming the program and the variable, no other word);
 * undefined for one word, a `${VAR}` or `~` (a start renders them), and a path with a space in it that is
 * there (one program, as written).
 */
export function commandLineWarning(command: string | undefined): string | undefined {
  if (command === undefined || command.includes("${") || command.startsWith("~")) return undefined;
  if (existsSync(resolve(command))) return undefined;
  return commandLineProblem(command);
}

/**
 * What `svc mcp add` says of a command server it wrote, before anything starts it: a command no process
 * start finds (a name on no PATH directory, an absolute path to nothing), as `svc config check` warns of it,
 * and relative paths, which `svc mcp test` run here reads from this directory, but the gateway from its own
 * working directory (a service's, or wherever `svc gateway start` ran), so that the test passes and the
 * gateway's every connect fails.
 */
export function addedCommandNotes(
  name: string,
  entry: AddedCommand,
  configPath: string,
  cwd = currentDirectory(),
  path = process.env.PATH ?? "",
): string[] {
  const command = entry.command;
  // Neither a path nor a program to look up: the one thing to say is that it is a command line.
  // A path with a space in it (`/opt/My Tools/server`) that is there is one program, as written.
  const expanded = command.includes("${") || command.startsWith("~");
  const spelled = expanded || existsSync(resolve(cwd ?? "/", command));
  const line = spelled ? undefined : commandLineProblem(command);
  if (line !== undefined) return [`Warning: ${configPath}: mcp_servers.${name}.command: ${line}`];
  const notes: string[] = [];
  // A command with a `/` is a path, there or not: a process start looks no further than the directory.
  const relativeCommand = cwd !== undefined && !expanded && command.includes("/") && !isAbsolute(command);
  const relative = [
    ...(relativeCommand ? [{ key: "command", word: command }] : []),
    ...entry.args.flatMap((word, index) =>
      relativePath(word, cwd) ? [{ key: `args[${index}]`, word }] : [],
    ),
  ];
  if (relative.length > 0) {
    const named = relative.map(({ key, word }) => `${key} ${JSON.stringify(word)}`).join(", ");
    const absolute = relative.map(({ word }) => resolve(cwd ?? "/", word)).join(", ");
    const one = relative.length === 1;
    notes.push(
      `Note: mcp_servers.${name}: ${named} ${one ? "is a relative path" : "are relative paths"}, taken from the working directory of the gateway that starts the server, not from this one (${cwd}) — write ${one ? "it" : "them"} as ${absolute} (svc mcp add ${name} --force -- …)`,
    );
  }
  // The entry's own PATH replaces the gateway's for its process (unless it is a variable, set elsewhere).
  const own = entry.env?.PATH?.includes("${") === false ? entry.env.PATH : undefined;
  // A relative command is left to the note above (or, with the working directory gone, to the connect).
  if (!expanded && (!command.includes("/") || isAbsolute(command))) {
    const problem = executableProblem(command, own ?? path);
    if (problem !== undefined)
      notes.push(
        `Warning: ${configPath}: mcp_servers.${name}.command: ${problem} — the gateway starts, but every connect of this server fails: check command (and ${own === undefined ? "PATH" : "the entry's env.PATH, which replaces the gateway's PATH for its process"})`,
      );
  }
  return notes;
}
