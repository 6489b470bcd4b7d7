import type { Command } from "commander";

/**
 * Marks `names` (attribute names: `schedule`) as options `command` cannot run without, checked once the parser
 * has refused unknown options. Commander checks its own required options before unknown ones, so
 * `--shedule x` was refused as a missing `--schedule`, without the did-you-mean that names the typo.
 */
export function requireOptions(command: Command, names: readonly string[]): Command {
  return command.hook("preAction", (_hooked, action) => {
    for (const option of action.options) {
      const name = option.attributeName();
      if (names.includes(name) && action.getOptionValue(name) === undefined)
        action.error(`error: required option '${option.flags}' not specified`, {
          exitCode: 2,
          code: "commander.missingMandatoryOptionValue",
        });
    }
  });
}
