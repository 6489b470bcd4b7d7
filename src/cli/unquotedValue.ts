import type { Command } from "commander";

/** The words of the command line `command` was parsed from (the root's `rawArgs`, which commander does not type). */
function commandLine(command: Command): readonly string[] {
  let root = command;
  while (root.parent !== null) root = root.parent;
  const raw = (root as unknown as { rawArgs?: unknown }).rawArgs;
  return Array.isArray(raw) && raw.every((word) => typeof word === "string") ? raw : [];
}

/**
 * The option of `command` whose value the first stray word follows (`--schedule` in `--schedule 0 9 * * 1-5`),
 * with the stray words after it; undefined when a stray word follows no option's value.
 */
function strayAfterValue(
  command: Command,
  words: readonly string[],
): { readonly option: string; readonly stray: readonly string[] } | undefined {
  const valued = new Set(
    command.options.filter((option) => option.required || option.optional).map((option) => option.long),
  );
  let after: string | undefined;
  let found: { option: string; stray: string[] } | undefined;
  for (let at = 0; at < words.length; at++) {
    const word = words[at] as string;
    if (word === "--") break;
    if (/^--?[A-Za-z]/.test(word)) {
      const name = word.split("=")[0] as string;
      after = valued.has(name) ? name : undefined;
      if (after !== undefined && !word.includes("=")) at += 1; // its value
      continue;
    }
    if (after === undefined) continue; // the command's own words, or an operand
    found ??= { option: after, stray: [] };
    if (found.option === after) found.stray.push(word);
  }
  return found;
}

/** How many stray words are quoted; the others are counted. */
const SHOWN_WORDS = 5;

/**
 * `svc cron create --schedule 0 9 * * 1-5` (the schedule not in quotes): the shell passes each field as a
 * word of its own, and an unquoted `*` as the names of the files in the working directory. Commander refused
 * the words after the first as "too many arguments ... Expected 0 arguments but got 4", which says nothing of
 * the quotes. Said as the option they follow, with the quotes to write: `examples` by option (`--schedule`
 * → `"0 9 * * 1-5"`), for the options whose value may hold spaces; the stray words are shown for the options in
 * `shown` only (another value may be a secret).
 */
export function unquotedValueError(
  text: string,
  command: Command,
  examples: Readonly<Record<string, string>>,
  shown: ReadonlySet<string>,
): string {
  if (!text.startsWith("error: too many arguments")) return text;
  const found = strayAfterValue(command, commandLine(command));
  // Only a value that may hold spaces is advised quotes (a job name, one word, is not).
  if (found === undefined || examples[found.option] === undefined) return text;
  const { option, stray } = found;
  const count = `${stray.length} more word${stray.length === 1 ? "" : "s"}`;
  // A `*` the shell turned into a directory's file names may be hundreds of words: a few are enough to see it.
  const listed = stray.slice(0, SHOWN_WORDS).map((word) => JSON.stringify(word));
  if (stray.length > SHOWN_WORDS) listed.push(`… ${stray.length - SHOWN_WORDS} more`);
  const words = shown.has(option) ? ` (${listed.join(", ")})` : "";
  const star = shown.has(option)
    ? " and turns each * into the names of the files in the working directory"
    : "";
  return `error: ${option} takes one value, and ${count} followed it${words} — write the whole value in quotes, as in ${option} ${examples[option]} (unquoted, the shell splits it into words${star})\n`;
}
