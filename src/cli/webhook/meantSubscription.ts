import { nearMiss } from "../../config/nearMiss.js";

/**
 * ` — did you mean deploys?` for a name one or two letters from a stored subscription's (`deplys`), else
 * nothing: a typo is named, so it is not taken for a subscription to create.
 */
export function meantSubscription(name: string, names: Iterable<string>): string {
  const meant = nearMiss(name, names);
  return meant === undefined || meant === name ? "" : ` — did you mean ${meant}?`;
}
