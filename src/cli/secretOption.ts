import { SvcError } from "../errors.js";
import { readSecretFile, readSecretStdin } from "../io/secretInput.js";

export interface SecretOptions {
  secret?: string | undefined;
  secretFile?: string | undefined;
  /** Set by `readSecretOption`: how the secret in `secret` was given, when not as `--secret <s>`. */
  secretGiven?: string | undefined;
}

/**
 * The option the secret was given with, as a message about it names it: `--secret`, `--secret-file <path>`
 * (the file, never its contents) or `--secret -` (stdin).
 */
export function secretFlag(options: SecretOptions): string {
  return options.secretGiven ?? "--secret";
}

/** The secret as a warning about it names it: `the --secret`, `the secret in --secret-file <path>`, …. */
export function theSecret(options: SecretOptions): string {
  return options.secretGiven === undefined ? "the --secret" : `the secret of ${options.secretGiven}`;
}

/** The help line of `--secret-file`, shared by the commands that take a secret. */
export const SECRET_FILE_HELP = "read the secret from this file (or give --secret - to read it from stdin)";

/**
 * `--secret-file <path>` and `--secret -` (stdin) read into `options.secret`, so a secret need not be on
 * the command line, where `ps` and the shell's history show it. Both options at once are refused (exit 2).
 * `secretGiven` then says how it was given, so a later check of it names the file (`secretFlag`).
 */
export async function readSecretOption(options: SecretOptions): Promise<void> {
  const { secretFile } = options;
  if (secretFile !== undefined && options.secret !== undefined)
    throw new SvcError("usage", "--secret and --secret-file cannot be combined — give the secret one way");
  if (secretFile !== undefined) {
    options.secret = readSecretFile(secretFile);
    options.secretGiven = `--secret-file ${secretFile}`;
    delete options.secretFile;
  } else if (options.secret === "-") {
    options.secret = await readSecretStdin();
    options.secretGiven = "--secret -";
  }
}
