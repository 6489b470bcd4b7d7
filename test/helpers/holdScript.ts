/**
 * A route's script that holds an event whose payload names `"hold":"<tag>"` (touching `started-<tag>` in
 * the home) until the test writes `release-<tag>` there; it passes every payload on as it came.
 */
export const HOLD_SCRIPT = [
  'd="$(dirname "$0")/.."; p="$(cat)"',
  `tag="$(printf '%s' "$p" | sed -n 's/.*"hold":"\\([a-z]*\\)".*/\\1/p')"`,
  'if [ -n "$tag" ]; then touch "$d/started-$tag"; while [ ! -e "$d/release-$tag" ]; do sleep 0.02; done; fi',
  "printf '%s' \"$p\"",
  "",
].join("\n");
