import { readlinkSync } from "node:fs";
import { dirname, resolve } from "node:path";

/** How many symbolic links are followed before a chain is taken for a loop. */
const MAX_LINKS = 32;

/**
 * The paths the symbolic link `path` leads through, in order, each resolved against its link's directory: the
 * last is the first that is no link (not there, or a file or directory). Empty when `path` is no link;
 * undefined for a loop of links (more than 32).
 */
export function linkChain(path: string): string[] | undefined {
  const hops: string[] = [];
  let at = path;
  for (let n = 0; n < MAX_LINKS; n++) {
    let target: string;
    try {
      target = readlinkSync(at);
    } catch {
      return hops;
    }
    at = resolve(dirname(at), target);
    hops.push(at);
  }
  return undefined;
}

/** Where the symbolic link `path` leads in the end (`linkChain`'s last); undefined for no link, or a loop. */
export function linkTarget(path: string): string | undefined {
  return linkChain(path)?.at(-1);
}

/**
 * The links between a link and where it leads in the end (`linkChain`), as a message says them after that
 * target: ` (by way of <link> → <link>)`, or nothing for a link that points there itself.
 */
export function byWayOf(chain: readonly string[]): string {
  return chain.length > 1 ? ` (by way of ${chain.slice(0, -1).join(" → ")})` : "";
}
