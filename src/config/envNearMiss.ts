import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parse as parseEnv } from "dotenv";
import { nearMiss } from "./nearMiss.js";

/**
 * The names a `.env` file sets, for a hint only: an unreadable or missing file sets none (the loader names
 * its own problems).
 */
function namesIn(envFile: string): string[] {
  try {
    return Object.keys(parseEnv(readFileSync(envFile, "utf8")));
  } catch {
    return [];
  }
}

/**
 * For a `${name}` that is set nowhere: ` (<envFile> sets GITHUB_WEBHOOK_SECRETS — did you mean that name? …)`
 * when the `.env` sets a name that differs from it only in case or by one or two letters (a name misspelt in
 * one of the two places, the commonest reason a variable "is not set"); ` (<cwd>/.env sets it, but …)` when
 * the working directory's `.env`, which other tools read, sets it; ` (<envFile> sets it, but …)` when the `.env`
 * sets it only after a value named it; else "".
 */
export function envNameNearMiss(envFile: string, name: string): string {
  // A `.env` in the working directory, where other tools read theirs (dotenv, docker compose): not svc's.
  const here = resolve(".env");
  if (here !== resolve(envFile) && namesIn(here).includes(name))
    return ` (${here} sets it, but svc reads only ${envFile} and the environment, not a .env in the working directory — move the line to ${envFile})`;
  const names = namesIn(envFile);
  // Set there, yet unset: a value names it on its own line or above the line that sets it (`S=${S}-x`).
  if (names.includes(name))
    return ` (${envFile} sets ${name}, but a value there names \${${name}} before it is set: on ${name}'s own line or a line above it — a value may use only the environment's variables and those of the lines above it; write the value out)`;
  const byLowerCase = new Map(names.map((set) => [set.toLowerCase(), set]));
  const meant = nearMiss(name.toLowerCase(), byLowerCase.keys());
  const set = meant === undefined ? undefined : byLowerCase.get(meant);
  if (set === undefined || set === name) return "";
  return ` (${envFile} sets ${set} — did you mean that name? a \${NAME} must match it exactly, case included)`;
}
