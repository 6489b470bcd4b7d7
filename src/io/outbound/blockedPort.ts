/**
 * fetch refuses the Fetch standard's blocked ports (6000, 6665-6669, 10080, 5060, ...) before connecting:
 * a TypeError `fetch failed` whose cause says `bad port`. No retry can change it, and `bad port` alone does
 * not say that the port is the problem, so every fetch's error names it with this text.
 */
export const BLOCKED_PORT =
  "one HTTP clients refuse (the Fetch standard's blocked ports, such as 6000, 6665-6669 and 10080)";

/** Whether `err` (or one of its first causes) is fetch's refusal of the URL's port. */
export function isBlockedPort(err: unknown): boolean {
  let at: unknown = err;
  for (let depth = 0; depth < 4 && at instanceof Error; depth++) {
    if (at.message === "bad port") return true;
    at = at.cause;
  }
  return false;
}
