import type { Command, Option } from "commander";

/**
 * The words that name an option of `command` itself: its long flags (`--no-` forms included, hidden options
 * too) and its help flags (`-h`, `--help`).
 */
function optionWords(command: Command): Set<string> {
  const words = new Set<string>();
  for (const option of command.options) if (option.long !== undefined) words.add(option.long);
  // The help option is not one of `command.options`: its help lists it.
  for (const option of command.createHelp().visibleOptions(command))
    if (!command.options.includes(option))
      for (const flag of [option.short, option.long]) if (flag !== undefined) words.add(flag);
  return words;
}

/** How to give `value` to `option` (typed as `typed`) so that it is taken as given. */
function asValue(option: Option, typed: string, value: string): string {
  return option.long === undefined ? `${typed}${value}` : `${option.long}=${value}`;
}

/**
 * Refuses a value-taking option whose value, given as the next word, is an option of the same command:
 * commander hands a required option the next word whatever it is, so `--secret --generate-secret` stored
 * the secret "--generate-secret" and `--prompt --deliver-only` a prompt of that text with deliver_only
 * left unset, and succeeded. Said as commander says a value missing at the end of the line, with how to
 * give that word as the value (`--secret=--generate-secret`, taken as given). A value that only starts
 * with a dash (`--secret -`, `--secret -s3cr3t`) is taken as before, and the error names the option and the
 * word, an option's name, never another value (it may be a secret). Called once every command is
 * registered.
 */
export function refuseOptionsAsValues(program: Command): void {
  const commands = [program];
  for (const command of commands) {
    commands.push(...command.commands);
    const parse = command.parseOptions.bind(command);
    command.parseOptions = (args) => {
      const words = optionWords(command);
      // The words commander's own parse hands to an option as its value, in the same order: an option
      // named by its whole word takes the next one (`--` ends the options); `--flag=value` takes its own.
      for (let at = 0; at < args.length; at += 1) {
        const word = args[at] as string;
        if (word === "--") break;
        const option = command.options.find((known) => known.long === word || known.short === word);
        if (option === undefined || !option.required) continue;
        const next = args[at + 1];
        if (next !== undefined && words.has(next))
          command.error(
            `error: option '${option.flags}' argument missing — the next word, ${next}, is an option of this command (to use it as the value, write ${asValue(option, word, next)})`,
            { exitCode: 2, code: "svc.optionAsValue" },
          );
        at += 1;
      }
      return parse(args);
    };
  }
}
