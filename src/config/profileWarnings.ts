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
    const problem = profileBindingProblem(name, profile, options);
    if (problem !== undefined)
      warnings.push(`[webhook] ${options.file}: ${routeKey(name, route)}.profile: ${problem}`);
  }
  return warnings;
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
 * whose name is near an existing one is a likely typo.
 */
export function profileBindingProblem(
  name: string,
  profile: string,
  options: ProfileBindingOptions,
): string | undefined {
  if (profile === DEFAULT_PROFILE) return undefined;
  // The route runs as its profile either way: a likely typo matters more than the path binding.
  const typo = options.profiles.includes(profile) ? undefined : nearMiss(profile, options.profiles);
  if (!options.multiplex && typo !== undefined)
    return `profile ${profile} has no directory ${options.profilesDir}/${profile} — did you mean ${typo}? The route runs as profile ${profile} all the same: its script, skills, in_file lists and cron job come from that directory (gateway.multiplex_profiles is off, so it answers at /webhooks/${name})`;
  if (!options.multiplex)
    return `the binding to profile ${profile} is not enforced — gateway.multiplex_profiles is off, so the route answers at /webhooks/${name}; set gateway.multiplex_profiles: true to serve it at /p/${profile}/webhooks/${name} only`;
  // A profile needs its directory only for the files it holds, so only a likely typo is named.
  return typo === undefined
    ? undefined
    : `profile ${profile} has no directory ${options.profilesDir}/${profile} — did you mean ${typo}? The route answers only at /p/${profile}/webhooks/${name}`;
}
