import type { Command, Option } from "commander";
import { nearMiss } from "../config/nearMiss.js";

/**
 * A command-line word that may carry a secret, split into what an error may show and a note: `--secrte=s3cr3t`
 * (an option's name mistyped), `-ps3cr3t` (a short option with its value attached) and `WEBHOOK_SECRET=s3cr3t`
 * (a variable written after `svc` instead of before it) are shown by their name alone. Undefined for any
 * other word, shown as it is.
 */
export function hiddenValue(word: string): { readonly name: string; readonly note: string } | undefined {
  const named = /^(--[^=]+|[^-=][^=]*)=/.exec(word)?.[1];
  if (named !== undefined) return { name: named, note: " (its value is not shown)" };
  if (/^-[^-]./.test(word)) return { name: word.slice(0, 2), note: " (what follows it is not shown)" };
  return undefined;
}

/** The long options of `command` and of the commands above it, as its help lists them. */
function longOptions(command: Command): Option[] {
  const options: Option[] = [];
  for (let at: Command | null = command; at !== null; at = at.parent)
    for (const option of at.createHelp().visibleOptions(at)) if (option.long) options.push(option);
  return options;
}

/**
 * A "Did you mean" for the long option `flag` on `command` (`\n(Did you mean --secret?)`, as commander writes
 * its own), or "": commander suggests for the word it was given, and `--secrte=s3cr3t` is near no option.
 */
function suggestion(command: Command, flag: string): string {
  const meant = nearMiss(flag, new Set(longOptions(command).map((option) => option.long as string)));
  return meant === undefined ? "" : `\n(Did you mean ${meant}?)`;
}

/**
 * The error for `--flag=value` where `--flag` is an option of `command` that takes no value (`--deliver-only`,
 * `--json`): commander calls it unknown, and its did-you-mean would name the very option typed. It names what
 * to write instead, and the option's opposite when it has one (`--no-deliver-only`). Undefined for a flag
 * `command` does not have.
 */
function valueGivenToFlag(command: Command, flag: string, note: string): string | undefined {
  const options = longOptions(command);
  const option = options.find((candidate) => candidate.long === flag);
  if (option === undefined || option.required || option.optional) return undefined;
  const opposite = option.negate ? `--${flag.slice("--no-".length)}` : `--no-${flag.slice(2)}`;
  const pair = options.some((candidate) => candidate.long === opposite) ? ` (or ${opposite})` : "";
  return `error: option '${flag}' takes no value${note} — write ${flag} alone${pair}`;
}

/**
 * The error commander prints, with each word of `words` (the command line) it quotes shown without its
 * value (`hiddenValue`): `unknown option '--secrte=s3cr3t'`, `unknown command 'SECRET=s3cr3t'`. An unknown
 * long option keeps its did-you-mean, asked again for its name alone.
 */
export function hideArgumentValues(text: string, words: readonly string[], command: Command): string {
  let out = text;
  for (const word of new Set(words)) {
    const quoted = `'${word}'`;
    const hidden = hiddenValue(word);
    if (hidden === undefined || !out.includes(quoted)) continue;
    const shown = `'${hidden.name}'${hidden.note}`;
    const unknownOption = `error: unknown option ${quoted}`;
    if (out.startsWith(unknownOption) && hidden.name.startsWith("--")) {
      const rest = out.slice(unknownOption.length);
      // Only commander's own line: a command that added advice of its own to it (svc mcp add: the server's
      // options go after --) knows better what the word was meant for.
      const flag = rest.startsWith("\n") ? valueGivenToFlag(command, hidden.name, hidden.note) : undefined;
      if (flag !== undefined) out = `${flag}${rest.replace(/^\n\(Did you mean [^\n]*\?\)/, "")}`;
      else if (!out.includes("\n(Did you mean"))
        out = `error: unknown option ${shown}${suggestion(command, hidden.name)}${rest}`;
    }
    out = out.split(quoted).join(shown);
  }
  return out;
}

/**
 * Every command of `program` prints its parser errors through `hideArgumentValues`, after its own
 * `outputError` (which sees the error as commander wrote it). Called once every command is registered:
 * a command copies its parent's output settings when it is made.
 */
export function hideValuesInErrors(program: Command, argv: readonly string[]): void {
  const words = argv.slice(2);
  const commands = [program];
  for (const command of commands) {
    commands.push(...command.commands);
    const own = command.configureOutput().outputError;
    command.configureOutput({
      outputError: (text, write) => {
        const hiding = (out: string) => write(hideArgumentValues(out, words, command));
        if (own === undefined) hiding(text);
        else own(text, hiding);
      },
    });
  }
}
