/** A lone UTF-16 surrogate: with the `u` flag a surrogate pair is one code point, which `\p{Cs}` does not match. */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * The id of a shared coalescing group, which names its Redis key and its entry in the due set:
 * `<route>:<key>`. Redis names are UTF-8, where each lone surrogate of a key (a payload's `"\ud83d"`)
 * would become U+FFFD and keys that differ only there would share one group; such a key is spelled as a
 * JSON string (`"\ud83d"`) after `<route>~json:`, which starts no other key's id (a route name has no `~`).
 * A well-formed key keeps the id it always had, so groups waiting in Redis across an upgrade are found.
 */
export function coalesceGroupId(routeName: string, key: string): string {
  return LONE_SURROGATE.test(key) ? `${routeName}~json:${JSON.stringify(key)}` : `${routeName}:${key}`;
}
