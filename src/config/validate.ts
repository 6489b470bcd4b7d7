import { dirname, join } from "node:path";
import { describe } from "./describe.js";
import { leftInEnvValue, readEnvFile } from "./envFile.js";
import { envNameNearMiss } from "./envNearMiss.js";
import { givenBy } from "./givenValues.js";
import { isLoopbackHost } from "./host.js";
import { unreadPlaceholderProblem, unsetVariablesIn } from "./interpolate.js";
import { namedProfile, profileNameProblem, svcPaths } from "./paths.js";
import type { Config } from "./schema.js";
import {
  checkedSecret,
  globalSecretKey,
  INSECURE_NO_AUTH,
  routeKey,
  secretAsWritten,
  secretFrom,
} from "./sections/webhook.js";

/** A `${VAR}` left in a value after interpolation: the variable is not set anywhere. */

/**
 * An unset `${VAR}` keeps its literal text; as a secret that text would be the HMAC key, and it is
 * printed in the README. Refused instead.
 */
function unsetSecretProblem(
  key: string,
  secret: string | undefined,
  file: string,
  profile?: string,
): string | undefined {
  if (secret === undefined) return undefined;
  const name = unsetVariablesIn(secret)[0];
  if (name === undefined) {
    // `${GH-x}`, `${GH:?set it}`: shell forms `svc` does not read would make the literal text the HMAC key.
    const problem = unreadPlaceholderProblem(secret, true);
    return problem === undefined ? undefined : `${key}: ${problem}`;
  }
  const env = join(dirname(file), ".env");
  return `${key}: \${${name}} is not set — set ${name} in ${env} or the environment${leftInEnvValue(env, name)}${setInProfileEnv(file, profile, name, env)}${envNameNearMiss(env, name)}`;
}

/**
 * A `${NAME}` (or a form svc does not read) left in WEBHOOK_SECRET's value, named at `from`, where the value
 * came from: the environment's is never rendered, and `.env`'s only from the lines above it.
 */
function variableSecretProblem(from: string, secret: string | undefined, file: string): string | undefined {
  if (secret === undefined) return undefined;
  const name = unsetVariablesIn(secret)[0];
  const unread = name === undefined ? unreadPlaceholderProblem(secret, true) : undefined;
  if (name === undefined && unread === undefined) return undefined;
  if (from.startsWith("environment variable"))
    return `${from}: ${name === undefined ? "a ${...}" : `\${${name}}`} is not replaced in the value of an environment variable (the tool that started svc passed it as written, as systemd's Environment= does), so its text would be the HMAC key — give WEBHOOK_SECRET the secret itself`;
  const env = join(dirname(file), ".env");
  return name === undefined
    ? `${from}: ${unread} (or put the value in 'single quotes' to take it as written)`
    : `${from}: \${${name}} is not set — set ${name} on a line above it in ${env}, or in the environment (or put the value in 'single quotes' to take it as written)`;
}

/**
 * A route bound to a named profile whose `.env` sets the variable: that file serves only the profile's MCP
 * connections, so the user who put the route's secret (or target) there is told why it was not found.
 */
export function setInProfileEnv(
  file: string,
  profile: string | undefined,
  name: string,
  env: string,
): string {
  const named = namedProfile(profile);
  if (named === undefined || profileNameProblem(named) !== undefined) return "";
  const own = svcPaths(dirname(file), named).env;
  try {
    if (!Object.hasOwn(readEnvFile(own), name)) return "";
  } catch {
    // An unreadable profile .env is named by the profile warnings.
    return "";
  }
  return ` (${own} sets it, but config.yaml reads its \${...} values from ${env} only: a profile's .env serves only that profile's MCP connections)`;
}

/**
 * Where the address judged came from, as a message says it: `host is 0.0.0.0` (the file's), `--host is 0.0.0.0 (it
 * overrides ...)`, or the address a running gateway is bound to. Given the host as shown: the file's text for
 * one a `${VAR}` gave (`"${BIND_HOST}" (the value it gives is not shown)`).
 */
export type HostSource = (host: string) => string;

const fileHost: HostSource = (host) => `host is ${host}`;

/** The startup rules (docs/webhook.md); each broken rule yields one message naming the key and the fix. */
const insecureOffLoopback = (host: string, source: HostSource) =>
  `INSECURE_NO_AUTH is only allowed on a loopback bind (127.0.0.1, localhost, ::1), but ${source(host)} — set a real secret or bind to 127.0.0.1`;

export function webhookStartupProblems(config: Config, file: string, hostSource = fileHost): string[] {
  const webhook = config.platforms.webhook;
  const problems: string[] = [];
  // A host a `${VAR}` gave is named as the file writes it.
  const givenHost = givenBy(webhook, "host");
  const host = givenHost === undefined ? webhook.host : describe(givenHost);
  // With the adapter on, refused also when every static route has its own secret: each subscription
  // without one falls back to the global secret, whose literal text would be its HMAC key.
  // WEBHOOK_SECRET in 'single quotes' in .env is taken as written: a `${NAME}` there is text of the secret.
  const from = secretFrom(webhook);
  const globalUnset = secretAsWritten(webhook)
    ? undefined
    : from === undefined
      ? unsetSecretProblem(`${file}: ${globalSecretKey(webhook)}`, checkedSecret(webhook), file)
      : variableSecretProblem(from, webhook.secret, file);
  if (
    globalUnset !== undefined &&
    (webhook.enabled || Object.values(webhook.routes).some((r) => r.secret === undefined))
  )
    problems.push(globalUnset);
  for (const [name, route] of Object.entries(webhook.routes)) {
    const at = `${file}: ${routeKey(name, route)}`;
    const secret = route.secret ?? webhook.secret;
    if (secret === undefined) {
      problems.push(
        `${at}.secret: missing — set a secret on the route, platforms.webhook.secret, or WEBHOOK_SECRET`,
      );
    }
    const routeUnset = unsetSecretProblem(`${at}.secret`, checkedSecret(route), file, route.profile);
    // A global secret is set (svc gateway setup's WEBHOOK_SECRET): the route may just use it.
    if (routeUnset !== undefined)
      problems.push(
        webhook.secret === undefined || globalUnset !== undefined
          ? routeUnset
          : `${routeUnset}; or leave secret out of this route to use the global secret (platforms.webhook.secret or WEBHOOK_SECRET, which is set)`,
      );
    if (route.deliver_only && route.deliver === "log") {
      problems.push(`${at}.deliver_only: needs a real delivery target — set deliver to a platform (not log)`);
    }
    if (route.deliver_only && route.cron_job !== undefined) {
      problems.push(`${at}: deliver_only and cron_job cannot be combined — keep one of them`);
    }
    if (route.coalesce !== undefined && (route.deliver_only || route.cron_job !== undefined)) {
      problems.push(
        `${at}.coalesce: cannot be combined with deliver_only or cron_job — remove coalesce or the other mode`,
      );
    }
    if (route.secret === INSECURE_NO_AUTH && !isLoopbackHost(webhook.host))
      problems.push(`${at}.secret: ${insecureOffLoopback(host, hostSource)}`);
  }
  // The global secret is also every subscription's that has none of its own: refused even when no
  // static route falls back to it.
  if (webhook.secret === INSECURE_NO_AUTH && !isLoopbackHost(webhook.host)) {
    const users = Object.entries(webhook.routes)
      .filter(([, route]) => route.secret === undefined)
      .map(([name]) => name);
    const usedBy = `${users.length > 0 ? `used by route ${users.join(", ")} and` : "used by"} every subscription without a secret of its own`;
    problems.push(
      `${file}: ${globalSecretKey(webhook)} (global secret or WEBHOOK_SECRET, ${usedBy}): ${insecureOffLoopback(host, hostSource)}`,
    );
  }
  return problems;
}
