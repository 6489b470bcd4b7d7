import { isVariableName } from "../../config/interpolate.js";
import { SvcError } from "../../errors.js";
import { BARE_NAME, pairsOption } from "../format.js";

const envPair = pairsOption(
  "--env",
  "KEY=value",
  "an environment variable name",
  "a server's environment holds one value per variable",
  true,
);

/** The `${VAR}` to suggest for `key`: the key itself when it can be one, else it in capitals. */
const variableFor = (key: string): string =>
  isVariableName(key) ? key : key.toUpperCase().replace(/[^A-Z0-9]+/g, "_");

/** What writing the variable as a `${VAR}` does instead, and the closing word of every refusal. */
const readsFromEnv = (key: string, variable: string): string =>
  `--env ${key}='\${${variable}}', so svc reads ${variable} from .env (or its own environment) at each connect`;

/**
 * `--env KEY=value` (repeatable). Refused with what to write, nothing written: a value given empty, usually
 * `--env "API_KEY=${API_KEY}"` which the shell expanded to nothing as API_KEY is set in `.env`, not in the
 * shell; and a variable's name alone, as docker's `-e API_KEY` passes the shell's value, which svc does not.
 */
export function collectEnv(value: string, previous: Record<string, string> = {}): Record<string, string> {
  if (BARE_NAME.test(value))
    throw new SvcError(
      "usage",
      `--env: expected KEY=value, got "${value}" — a server gets no variable of svc's environment or .env by its name alone (as docker's -e ${value} passes the shell's): write ${readsFromEnv(value, value)}; nothing was written`,
    );
  const pairs = envPair(value, previous);
  const key = value.slice(0, value.indexOf("="));
  if (pairs[key] === "") {
    const variable = variableFor(key);
    throw new SvcError(
      "usage",
      `--env ${key}=: the value is empty, so the server would get ${key} set to nothing — the shell likely expanded a \${VAR} to nothing (set in .env, not in the shell): write it in single quotes, ${readsFromEnv(key, variable)}; an empty value meant so is written in config.yaml (env: {${key}: ""}); nothing was written`,
    );
  }
  return pairs;
}
