import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { envFileProblem, readEnvFile, unnamedEnvLineWarnings } from "./envFile.js";
import { knownKeysAt } from "./knownKeys.js";
import { nearMiss } from "./nearMiss.js";
import { DEFAULT_PROFILE, svcPaths } from "./paths.js";
import { configSchema } from "./schema.js";

/**
 * A named profile's `.env` with a line that sets nothing, or that cannot be read (a directory, a link to
 * nothing, not UTF-8). Only its MCP connections read that file, at a connect, which never refuses: the start
 * and `svc config check` warn instead, as the default profile's `.env` is refused.
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
        ...unnamedEnvLineWarnings(file),
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
 * So does a `WEBHOOK_<setting>` of `.env` or the environment (`env`) for a `platforms.webhook` setting no
 * variable sets (`WEBHOOK_HOST`, as other gateways and a docker `-e` give the bind address): named with the
 * key to write instead, and an `SVC_LOG_LEVEL` or `SVC_HOME` of `.env`, which svc reads from the environment
 * alone. None is named when config.yaml uses it as a `${NAME}` of its own.
 */
export function unreadVariableWarnings(
  envFile: string,
  configFile: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): string[] {
  let values: Record<string, string>;
  try {
    values = readEnvFile(envFile);
  } catch {
    return []; // the load names a .env it cannot read
  }
  let config = "";
  try {
    config = readFileSync(configFile, "utf8");
  } catch {
    // no config.yaml: no ${NAME} of its own
  }
  const usedByConfig = (name: string) => config.includes(`\${${name}`) || config.includes(`\${env:${name}`);
  const fromEnvironment = Object.keys(env).filter(
    (name) => settingOfVariable(name) !== undefined && !usedByConfig(name),
  );
  return [
    ...Object.entries(values).flatMap(([name, value]) => {
      if (WEBHOOK_VARIABLES.includes(name) || usedByConfig(name)) return [];
      if (ENVIRONMENT_ONLY.includes(name))
        return [
          `${envFile}: ${name} is not read from .env — svc reads it from the environment only, before .env: set it where svc is started (${name}=${value} svc gateway run, or the environment of its service)`,
        ];
      const setting = settingOfVariable(name);
      if (setting !== undefined) return [`${envFile}: ${unreadSetting(name, setting, configFile)}`];
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
    }),
    ...fromEnvironment.map(
      (name) => `environment variable ${unreadSetting(name, settingOfVariable(name) as string, configFile)}`,
    ),
  ];
}

/** What svc reads from the environment before `.env`: the log level, and where `.env` itself is. */
const ENVIRONMENT_ONLY: readonly string[] = ["SVC_LOG_LEVEL", "SVC_HOME"];

/** The `platforms.webhook` settings that no variable sets: all but `enabled`, `port` and `secret`. */
const UNSET_BY_VARIABLES = knownKeysAt(configSchema, ["platforms", "webhook"]).filter(
  (key) => !["enabled", "port", "secret", "routes", "extra"].includes(key),
);

/** `rate_limit` for `WEBHOOK_RATE_LIMIT` (in any case): a setting of config.yaml no variable sets; else undefined. */
function settingOfVariable(name: string): string | undefined {
  const lower = name.toLowerCase();
  return lower.startsWith("webhook_")
    ? UNSET_BY_VARIABLES.find((key) => lower === `webhook_${key}`)
    : undefined;
}

function unreadSetting(name: string, setting: string, configFile: string): string {
  const only =
    "(the webhook adapter reads only WEBHOOK_ENABLED, WEBHOOK_PORT and WEBHOOK_SECRET from .env and the environment)";
  return setting === "host"
    ? `${name} is not a variable svc reads — the bind address is platforms.webhook.host in ${configFile}: write host: \${${name}} there to take it from this variable (or give --host to svc gateway run or start) ${only}`
    : `${name} is not a variable svc reads — set platforms.webhook.${setting} in ${configFile} ${only}`;
}
