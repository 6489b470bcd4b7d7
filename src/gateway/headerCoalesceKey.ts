import { coalesceKeyPaths } from "../streams/coalesceKey.js";

/**
 * A `coalesce.key` that reads `headers.<Name>`, as a filter reads a request header: a key reads the payload
 * only (as prompt templates do), so it looks for a body field `headers`, which senders rarely send, and
 * every such event runs at once, never grouped. Said with the key as written; undefined for another key.
 */
export function headerCoalesceKey(key: string): string | undefined {
  const headers = coalesceKeyPaths(key).filter((path) => path.split(".")[0] === "headers");
  if (headers.length === 0) return undefined;
  // The event type's header (X-GitHub-Event, X-Gitlab-Event): the key has it as event_type.
  const eventHeader = headers.some((path) => /-event$/i.test(path));
  return `coalesce.key ${key} reads a field headers of the payload, not a request header (a key reads the payload only, as prompt templates do) — an event whose body has no such field runs at once, not grouped; key on a payload field${eventHeader ? " ({event_type} is the event type a header names)" : ""}`;
}
