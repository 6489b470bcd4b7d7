import { editDistance, nearMiss } from "../../config/nearMiss.js";

/**
 * ` — did you mean deploys?` for a name one or two letters from a stored subscription's (`deplys`), else
 * nothing: a typo is named, so it is not taken for a subscription to create.
 */
export function meantSubscription(name: string, names: Iterable<string>): string {
  const known = [...names];
  const meant = nearMiss(name, known) ?? twoLetterTypo(name, known);
  return meant === undefined || meant === name ? "" : ` — did you mean ${meant}?`;
}

/**
 * A two-letter name one letter from exactly one two-letter subscription's (`gx` for `gh`, `hg` for `gh`):
 * `nearMiss` names nothing for names so short, since one letter of them is half the name; a subscription's
 * name is often that short (a forge's initials), and the one meant is then the only one that close.
 */
function twoLetterTypo(name: string, known: readonly string[]): string | undefined {
  if (name.length !== 2) return undefined;
  const close = known.filter(
    (candidate) => candidate.length === 2 && editDistance(name.toLowerCase(), candidate.toLowerCase()) === 1,
  );
  return close.length === 1 ? close[0] : undefined;
}
