import type { Command, Option } from "commander";

/** An option that takes a value and keeps one: its help does not say it may be repeated. */
function keepsOneValue(option: Option): boolean {
  return (option.required || option.optional) && !option.variadic && !/repeat/i.test(option.description);
}

/**
 * Refuses an option that keeps one value given twice (`svc cron create --name a --name b`): commander keeps
 * the last and drops the first without a word, so a pasted or edited command line could create, send or
 * change something else than meant. Options whose help says they repeat (`--deliver-extra`, `--env`,
 * `--header`, `--events`) add up as before. The error names the option, never its values (one may be a
 * secret). Called once every command is registered.
 */
export function refuseRepeatedOptions(program: Command): void {
  const commands = [program];
  for (const command of commands) {
    commands.push(...command.commands);
    refuseOppositeOptions(command);
    for (const option of command.options) {
      if (!keepsOneValue(option)) continue;
      let given = 0;
      command.on(`option:${option.name()}`, () => {
        given += 1;
        if (given === 2)
          command.error(
            `error: option '${option.flags}' given more than once — give it once (only one value is kept)`,
            { exitCode: 2, code: "svc.repeatedOption" },
          );
      });
    }
  }
}

/**
 * Refuses an option given with its `--no-` opposite (`--deliver-only --no-deliver-only`, `--cron-job x
 * --no-cron-job`): commander keeps whichever came last without a word, as it does for a repeated option.
 */
function refuseOppositeOptions(command: Command): void {
  for (const negated of command.options) {
    if (!negated.negate) continue;
    const positive = command.options.find(
      (option) => !option.negate && option.attributeName() === negated.attributeName(),
    );
    if (positive === undefined) continue;
    const given = new Set<string>();
    for (const option of [positive, negated])
      command.on(`option:${option.name()}`, () => {
        given.add(option.name());
        if (given.size === 2)
          command.error(
            `error: options '${positive.long}' and '${negated.long}' both given — give one (only the last would count)`,
            { exitCode: 2, code: "svc.oppositeOptions" },
          );
      });
  }
}
