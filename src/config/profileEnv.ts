import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { envFileProblem, readEnvFile } from "./load.js";
import { nearMiss } from "./nearMiss.js";
import { DEFAULT_PROFILE, svcPaths } from "./paths.js";

/**
 * A named profile's `.env` with a line that sets nothing. Only its MCP connections read that file, at a
 * connect, which never refuses: the start and `svc config check` warn instead, as the default profile's
 * `.env` is refused.
 */
export function profileEnvFileWarnings(home: string, profiles: readonly string[]): string[] {
  return profiles
    .filter((profile) => profile !== DEFAULT_PROFILE)
    .flatMap((profile) => {
      const file = svcPaths(home, profile).env;
      // Both, when both apply: dotenv skips a line that sets nothing and still reads the others.
      const problem = envFileProblem(file);
      const unread = webhookVariablesIn(file);
      return [
        ...(problem === undefined
          ? []
          : [`${problem} (profile ${profile}'s MCP connections read this file)`]),
        ...(unread.length === 0
          ? []
          : [
              `${file}: ${unread.join(", ")} ${unread.length === 1 ? "is" : "are"} not read here — the webhook adapter reads WEBHOOK_* from ${join(home, ".env")} (or the environment) for every profile; a profile's .env serves only its MCP connections: move ${unread.length === 1 ? "it" : "them"} there${unread.includes("WEBHOOK_SECRET") ? `, or give profile ${profile}'s routes a secret: of their own in config.yaml` : ""}`,
            ]),
      ];
    });
}

/** The adapter's variables (`WEBHOOK_SECRET`, ...) a profile's `.env` sets: only the shared `.env` is read for them. */
function webhookVariablesIn(file: string): string[] {
  if (!existsSync(file)) return [];
  try {
    return Object.keys(readEnvFile(file)).filter((name) => WEBHOOK_VARIABLES.includes(name));
  } catch {
    return [];
  }
}

const WEBHOOK_VARIABLES: readonly string[] = ["WEBHOOK_ENABLED", "WEBHOOK_PORT", "WEBHOOK_SECRET"];

/** Files only `$SVC_HOME` holds: a copy under a profile's directory is never read. */
const SHARED_ONLY = ["config.yaml", "webhook_subscriptions.json"] as const;

/**
 * A `config.yaml` or `webhook_subscriptions.json` written under `profiles/<name>/` (as if a profile had
 * its own) is never read: one of each serves every profile. Named at start and by `svc config check`
 * instead of ignored without a word.
 */
export function profileSharedFileWarnings(home: string, profiles: readonly string[]): string[] {
  const warnings: string[] = [];
  // `profiles/default/` (scripts, .env, cron jobs put there for the default profile) is never read either.
  const defaultDir = join(home, "profiles", DEFAULT_PROFILE);
  if (existsSync(defaultDir))
    warnings.push(
      `${defaultDir} is not read: the default profile's directory is ${home} itself (its scripts/, skills/, cron/, mcp-tokens/, .env) — move what it holds there`,
    );
  for (const profile of profiles) {
    if (profile === DEFAULT_PROFILE) continue;
    const root = svcPaths(home, profile).root;
    for (const name of SHARED_ONLY) {
      const file = join(root, name);
      if (!existsSync(file)) continue;
      warnings.push(
        name === "config.yaml"
          ? `${file} is not read: one ${join(home, name)} serves every profile — move its routes there, bound with profile: ${profile}`
          : `${file} is not read: one ${join(home, name)} holds every profile's subscriptions — create them with svc webhook subscribe <name> --route-profile ${profile}`,
      );
    }
  }
  return warnings;
}

/**
 * A name in `.env` one or two letters from a `WEBHOOK_*` variable (`WEBHOOK_PROT=9000`, `webhook_secret=...`)
 * sets nothing the adapter reads: the gateway would listen on 8644, or have no global secret, without a word.
 * Named, unless config.yaml uses it as a `${NAME}` of its own.
 */
export function webhookVariableTypos(envFile: string, configFile: string): string[] {
  let names: string[];
  try {
    names = Object.keys(readEnvFile(envFile));
  } catch {
    return []; // the load names a .env it cannot read
  }
  let config = "";
  try {
    config = readFileSync(configFile, "utf8");
  } catch {
    // no config.yaml: no ${NAME} of its own
  }
  return names.flatMap((name) => {
    if (
      WEBHOOK_VARIABLES.includes(name) ||
      config.includes(`\${${name}`) ||
      config.includes(`\${env:${name}`)
    )
      return [];
    // nearMiss compares with lower-case candidates.
    const meant = nearMiss(
      name.toLowerCase(),
      WEBHOOK_VARIABLES.map((variable) => variable.toLowerCase()),
    )?.toUpperCase();
    return meant === undefined
      ? []
      : [
          `${envFile}: ${name} is not a variable svc reads — did you mean ${meant}? (the webhook adapter reads WEBHOOK_ENABLED, WEBHOOK_PORT and WEBHOOK_SECRET; names are case-sensitive)`,
        ];
  });
}
