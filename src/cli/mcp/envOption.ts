import { SvcError } from "../../errors.js";
import { BARE_NAME, NOT_SHOWN, pairsOption } from "../format.js";

const envPair = pairsOption(
  "--env",
  "KEY=value",
  "an environment variable name",
  "a server's environment holds one value per variable",
  true,
);

/** A variable's name in capitals (`S3_TOKEN`): text with lower-case letters may be a credential given alone. */
const VARIABLE_IN_CAPITALS = /^[A-Z_][A-Z0-9_]*$/;

/** An environment variable's name, as a shell takes it. */
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** What is left after the first `=` of a credential ending in base64 padding (`abc==`). */
const PADDING_ONLY = /^=+$/;

/** What writing the variable as a `${VAR}` does instead, and the closing word of every refusal. */
const readsFromEnv = (key: string, variable: string): string =>
  `--env ${key}='\${${variable}}', so svc reads ${variable} from .env (or its own environment) at each connect`;

/**
 * `--env KEY=value` (repeatable). Refused with what to write, nothing written: a value given empty, usually
 * `--env "API_KEY=${API_KEY}"` which the shell expanded to nothing as API_KEY is set in `.env`, not in the
 * shell; a variable's name alone, as docker's `-e API_KEY` passes the shell's value, which svc does not; and
 * text before the first `=` that is no variable's name, or a value of `=` alone: a credential given without its
 * `NAME=` (`--env "$TOKEN"`) whose own `=` (base64 padding, `a=b` inside) would make it a variable's name.
 */
export function collectEnv(value: string, previous: Record<string, string> = {}): Record<string, string> {
  if (BARE_NAME.test(value))
    throw new SvcError(
      "usage",
      `--env: expected KEY=value, got "${value}" — a server gets no variable of svc's environment or .env by its name alone (as docker's -e ${value} passes the shell's): write ${readsFromEnv(value, value)}; nothing was written`,
    );
  const eq = value.indexOf("=");
  // (No `=`, or nothing before it: the pair parser refuses it without quoting it.)
  if (eq <= 0) return envPair(value, previous);
  const key = value.slice(0, eq);
  const rest = value.slice(eq + 1);
  if (rest === "") {
    // Only a name in capitals is quoted back: other text before the `=` may be a credential given alone whose
    // base64 padding ends it (`--env "$TOKEN"`, its `NAME=` forgotten), as the parser's refusals hold.
    if (!VARIABLE_IN_CAPITALS.test(key))
      throw new SvcError(
        "usage",
        `--env: the value after = is empty and the text before it is no variable name ${NOT_SHOWN} — write ${readsFromEnv("KEY", "KEY")}, KEY being the variable's name; nothing was written`,
      );
    throw new SvcError(
      "usage",
      `--env ${key}=: the value is empty, so the server would get ${key} set to nothing — the shell likely expanded a \${VAR} to nothing (set in .env, not in the shell): write it in single quotes, ${readsFromEnv(key, key)}; an empty value meant so is written in config.yaml (env: {${key}: ""}); nothing was written`,
    );
  }
  // A credential given alone (`--env "$TOKEN"`, its `NAME=` forgotten) that holds an `=` of its own would be
  // split there and written as a variable's name: neither part is shown.
  const notAPair = !VARIABLE_NAME.test(key)
    ? "the text before the first = is not an environment variable name (letters, digits and _, not starting with a digit)"
    : PADDING_ONLY.test(rest)
      ? "the value after the first = is nothing but =, as a credential ending in base64 padding given alone leaves it"
      : undefined;
  if (notAPair !== undefined)
    throw new SvcError(
      "usage",
      `--env: ${notAPair} ${NOT_SHOWN} — write --env NAME=value, NAME being the variable's name (or ${readsFromEnv("NAME", "NAME")}); nothing was written`,
    );
  return envPair(value, previous);
}
