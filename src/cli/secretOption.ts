import { SvcError } from "../errors.js";
import { readSecretFile, readSecretStdin } from "../io/secretInput.js";

export interface SecretOptions {
  secret?: string | undefined;
  secretFile?: string | undefined;
}

/** The help line of `--secret-file`, shared by the commands that take a secret. */
export const SECRET_FILE_HELP = "read the secret from this file (or give --secret - to read it from stdin)";

/**
 * `--secret-file <path>` and `--secret -` (stdin) read into `options.secret`, so a secret need not be on
 * the command line, where `ps` and the shell's history show it. Both options at once are refused (exit 2).
 */
export async function readSecretOption(options: SecretOptions): Promise<void> {
  const { secretFile } = options;
  if (secretFile !== undefined && options.secret !== undefined)
    throw new SvcError("usage", "--secret and --secret-file cannot be combined — give the secret one way");
  if (secretFile !== undefined) {
    options.secret = readSecretFile(secretFile);
    delete options.secretFile;
  } else if (options.secret === "-") options.secret = await readSecretStdin();
}
