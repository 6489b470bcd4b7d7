import type { Command } from "commander";

/** The subcommand of `command` called `word` (by name or alias). */
function subcommand(command: Command, word: string): Command | undefined {
  return command.commands.find((sub) => sub.name() === word || sub.aliases().includes(word));
}

/**
 * `svc [group] help <names...>` as the parser should read it. Commander's help command looks at its first
 * name only: `svc help mcp add` printed the help of `mcp`, not of `mcp add`, and `svc help bogus` printed
 * the usage without saying what was wrong. The names of a command are read as `<names...> --help` (names
 * past a command without subcommands are ignored: help never runs a command); a name that is no command
 * as `<names up to it>`, which the parser refuses as an unknown command (exit 2). A word where a group
 * expects its command that is none of them (`svc gatewya --help`, `svc mcp lsit --help`) loses the line's
 * `--help`/`-h`, so the parser refuses the word (exit 2) instead of printing the group's help (exit 0). Any
 * other line is returned as it is.
 */
export function helpArgv(program: Command, argv: readonly string[]): string[] {
  let command = program;
  let at = 2;
  for (
    let sub = subcommand(command, argv[at] ?? "");
    sub !== undefined;
    sub = subcommand(command, argv[at] ?? "")
  ) {
    command = sub;
    at += 1;
  }
  const word = argv[at];
  if (word !== undefined && word !== "help" && !word.startsWith("-") && command.commands.length > 0)
    return withoutHelpFlags(argv);
  const names = argv.slice(at + 1);
  if (argv[at] !== "help" || command.commands.length === 0 || names.length === 0) return [...argv];
  const head = argv.slice(0, at);
  let target = command;
  for (const [i, name] of names.entries()) {
    if (target.commands.length === 0) break;
    const sub = subcommand(target, name);
    if (sub === undefined) return name.startsWith("-") ? [...argv] : [...head, ...names.slice(0, i + 1)];
    target = sub;
  }
  const path: string[] = [];
  for (let c: Command | null = target; c !== null && c !== command; c = c.parent) path.unshift(c.name());
  return [...head, ...path, "--help"];
}

/** `argv` without its help flags before a `--` (after it, they are a command's own arguments). */
function withoutHelpFlags(argv: readonly string[]): string[] {
  const end = argv.indexOf("--");
  return argv.filter((arg, i) => (end !== -1 && i >= end) || (arg !== "--help" && arg !== "-h"));
}
