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
 * with multiplexing off the path binding is not enforced; with it on, a profile with no directory whose
 * name is near an existing one (a typo, such as `wrok`) leaves the route answering only at a path no sender was given.
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
  if (!options.multiplex)
    return `the binding to profile ${profile} is not enforced — gateway.multiplex_profiles is off, so the route answers at /webhooks/${name}; set gateway.multiplex_profiles: true to serve it at /p/${profile}/webhooks/${name} only`;
  // A profile needs its directory only for the files it holds, so only a likely typo is named.
  if (options.profiles.includes(profile)) return undefined;
  const meant = nearMiss(profile, options.profiles);
  return meant === undefined
    ? undefined
    : `profile ${profile} has no directory ${options.profilesDir}/${profile} — did you mean ${meant}? The route answers only at /p/${profile}/webhooks/${name}`;
}
