import type { Command } from "commander";
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

/**
 * A "Did you mean" for the long option `flag` on `command` (`\n(Did you mean --secret?)`, as commander writes
 * its own), or "": commander suggests for the word it was given, and `--secrte=s3cr3t` is near no option.
 */
function suggestion(command: Command, flag: string): string {
  const longs = new Set<string>();
  for (let at: Command | null = command; at !== null; at = at.parent)
    for (const option of at.createHelp().visibleOptions(at)) if (option.long) longs.add(option.long);
  const meant = nearMiss(flag, longs);
  return meant === undefined ? "" : `\n(Did you mean ${meant}?)`;
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
    if (out.startsWith(unknownOption) && hidden.name.startsWith("--") && !out.includes("\n(Did you mean"))
      out = `error: unknown option ${shown}${suggestion(command, hidden.name)}${out.slice(unknownOption.length)}`;
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
