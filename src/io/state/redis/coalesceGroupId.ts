import { DEFAULT_PROFILE } from "../../../config/paths.js";

/** A lone UTF-16 surrogate: with the `u` flag a surrogate pair is one code point, which `\p{Cs}` does not match. */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * The id of a shared coalescing group, which names its Redis key and its entry in the due set:
 * `<route>:<key>` for a route of the default profile, `<route>@<profile>:<key>` for one bound to a named
 * profile, so that events of one route accepted under two profiles (the route rebound on one instance
 * before the other, or by a reload while its group waits) are two groups, each run as its own profile. A
 * route name has no `@` and a profile name no `@`, `:` or `~`, so the route and profile end where the first
 * `@` and the first `:` (or `~`) stand, and no such id is another's. Redis names are UTF-8, where each lone
 * surrogate of a key (a payload's `"\ud83d"`) would become U+FFFD and keys that differ only there would
 * share one group; such a key is spelled as a JSON string (`"\ud83d"`) after `<route>~json:` (or
 * `<route>@<profile>~json:`), which starts no other key's id (a route name has no `~`). A well-formed key of
 * the default profile keeps the id it always had, so its groups waiting in Redis across an upgrade are
 * found; a named profile's group stored before the upgrade under `<route>:<key>` fires on its stored timer
 * as it was (an event after the upgrade opens the profile's own group beside it).
 */
export function coalesceGroupId(routeName: string, profile: string, key: string): string {
  const owner = profile === DEFAULT_PROFILE ? routeName : `${routeName}@${profile}`;
  return LONE_SURROGATE.test(key) ? `${owner}~json:${JSON.stringify(key)}` : `${owner}:${key}`;
}
