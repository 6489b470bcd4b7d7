import { CommanderError } from "commander";
import { svcHome } from "../config/paths.js";
import { describeError, isSvcError } from "../errors.js";
import { redactCredentials } from "../io/credentials.js";
import { terminalText } from "../io/terminalText.js";
import { helpArgv } from "./helpCommand.js";
import { homeCause } from "./homeCause.js";
import { buildProgram } from "./program.js";

/** Runs one `svc` command line (`argv` as in `process.argv`); its outcome is `process.exitCode`. */
export async function main(argv: readonly string[] = process.argv): Promise<void> {
  try {
    const program = await buildProgram(argv);
    await program.parseAsync(helpArgv(program, argv));
  } catch (err) {
    if (err instanceof CommanderError) {
      // The parser already printed the reason (or, for a missing subcommand, the usage): exit 2 (docs/cli.md).
      process.exitCode = err.exitCode === 0 ? 0 : 2;
      return;
    }
    // A server's answer quoted in the error may repeat the credential it refused.
    const message = homeCause(err, svcHome) ?? (isSvcError(err) ? err.message : describeError(err));
    process.stderr.write(`svc: ${terminalText(redactCredentials(message))}\n`);
    process.exitCode = isSvcError(err, "usage") ? 2 : 1;
  }
}
