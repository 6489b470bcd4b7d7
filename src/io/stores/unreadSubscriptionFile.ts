import { describeError } from "../../errors.js";
import { terminalText } from "../terminalText.js";
import { subscriptionStore } from "./subscriptions.js";

/** How many of the names a warning lists before "and N more". */
const NAMED = 5;

/**
 * With `state.backend: redis`: the subscriptions webhook_subscriptions.json (`file`) holds under names the
 * Redis store (`where`, holding `inRedis`) does not — left from the home's `local` backend, which that file
 * is, and not read with redis, so no gateway serves them (their senders get 404). A warning naming them
 * (the first few, then "and N more") and what to do; undefined when the file holds none of them (or is not
 * there). A file that cannot be read is named with its problem, as it may hold some.
 */
export function unreadSubscriptionFileWarning(
  file: string,
  inRedis: Iterable<string>,
  where: string,
): string | undefined {
  let names: string[];
  try {
    names = Object.keys(subscriptionStore(file).read().records);
  } catch (err) {
    return `${file} is not read with state.backend: redis, and it cannot be read either (${describeError(err)}): any subscription it holds is served by no gateway — recreate those with svc webhook subscribe, then remove the file`;
  }
  const held = new Set(inRedis);
  const missing = names.filter((name) => !held.has(name)).sort((a, b) => a.localeCompare(b));
  if (missing.length === 0) return undefined;
  const shown = missing.slice(0, NAMED).join(", ");
  const more = missing.length > NAMED ? ` and ${missing.length - NAMED} more` : "";
  const count = missing.length === 1 ? "1 subscription" : `${missing.length} subscriptions`;
  return terminalText(
    `${file} holds ${count} that ${where} does not (${shown}${more}): with state.backend: redis that file is not read, so ${missing.length === 1 ? "it is" : "they are"} served by no gateway (404) — recreate each with svc webhook subscribe <name> (its settings and secret are in the file), then remove ${missing.length === 1 ? "it" : "them"} from the file; or set state.backend: local to serve the file again`,
  );
}
