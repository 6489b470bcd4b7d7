import { describe, type WrittenAs } from "./describe.js";
import { givenBy } from "./givenValues.js";
import { nearMiss } from "./nearMiss.js";
import { DEFAULT_PROFILE } from "./paths.js";
import { routeKey } from "./sections/webhook.js";

export interface BoundRoute {
  readonly name: string;
  /** The route's profile (`default` when unbound). */
  readonly profile: string;
  /** The route as configured: names its key where it was written (`routeKey`). */
  readonly route: object;
}

/**
 * A route's `profile` that cannot do what it was written for is named at startup instead of ignored:
 * a profile with no directory whose name is near an existing one (a typo, such as `wrok`) runs the route
 * without that profile's files, and with multiplexing on answers only at a path no sender was given; with
 * multiplexing off the path binding is not enforced.
 */
export function profileBindingWarnings(
  routes: Iterable<BoundRoute>,
  options: { file: string } & ProfileBindingOptions,
): string[] {
  const warnings: string[] = [];
  for (const { name, profile, route } of routes) {
    // One a `${VAR}` gave is named as config.yaml writes it.
    const problem = profileBindingProblem(name, profile, options, givenBy(route, "profile"));
    if (problem !== undefined)
      warnings.push(`[webhook] ${options.file}: ${routeKey(name, route)}.profile: ${problem}`);
  }
  return warnings;
}

/**
 * The profiles a `${VAR}` gave to a route (`profile: ${PROFILE}`), with the text the file writes for each:
 * for the messages about a profile (its MCP variables, ...) that name it, never what the variable gave.
 */
export function givenProfiles(
  routes: Iterable<{ readonly profile?: string | undefined }>,
): ReadonlyMap<string, WrittenAs> {
  const given = new Map<string, WrittenAs>();
  for (const route of routes) {
    const written = givenBy(route, "profile");
    if (written !== undefined && route.profile !== undefined && !given.has(route.profile))
      given.set(route.profile, written);
  }
  return given;
}

export interface ProfileBindingOptions {
  readonly multiplex: boolean;
  /** The profiles with a directory under `profilesDir`. */
  readonly profiles: readonly string[];
  readonly profilesDir: string;
}

/**
 * What route `name` bound to `profile` cannot do (a config.yaml route's or a subscription's), or
 * undefined: the binding is not enforced with multiplexing off; with it on, a profile with no directory
 * whose name is near an existing one is a likely typo. `given`: a `${VAR}` gave the profile, which is then
 * named as the file writes it, and no path is built from it (its directory, its `/p/<profile>/...` path).
 */
export function profileBindingProblem(
  name: string,
  profile: string,
  options: ProfileBindingOptions,
  given?: WrittenAs,
): string | undefined {
  if (profile === DEFAULT_PROFILE) return undefined;
  // The route runs as its profile either way: a likely typo matters more than the path binding.
  const typo = options.profiles.includes(profile) ? undefined : nearMiss(profile, options.profiles);
  const shown = given === undefined ? profile : describe(given);
  const noDirectory =
    given === undefined
      ? `has no directory ${options.profilesDir}/${profile}`
      : `has no directory under ${options.profilesDir}`;
  const path = `/p/${given === undefined ? profile : "<profile>"}/webhooks/${name}`;
  if (!options.multiplex && typo !== undefined)
    return `profile ${shown} ${noDirectory} — did you mean ${typo}? The route runs as ${given === undefined ? `profile ${profile}` : "that profile"} all the same: its script, skills, in_file lists and cron job come from that directory (gateway.multiplex_profiles is off, so it answers at /webhooks/${name})`;
  if (!options.multiplex)
    return `the binding to profile ${shown} is not enforced — gateway.multiplex_profiles is off, so the route answers at /webhooks/${name}; set gateway.multiplex_profiles: true to serve it at ${path} only`;
  // A profile needs its directory only for the files it holds, so only a likely typo is named.
  return typo === undefined
    ? undefined
    : `profile ${shown} ${noDirectory} — did you mean ${typo}? The route answers only at ${path}`;
}
