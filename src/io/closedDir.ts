import { statSync } from "node:fs";
import { closedOnTheWay } from "./linkChain.js";

/** A directory this user may not look into, as a message says it, and what lets this user through. */
export interface ClosedDir {
  readonly dir: string;
  /** Its owner's uid when another user's. */
  readonly owner?: number;
  /** `<dir> (owned by uid 0)`, with no owner for this user's own. */
  readonly named: string;
  /** `let this user look into it (chmod o+x <dir>, as its owner or root)` (`chmod u+x <dir>` for its own). */
  readonly fix: string;
}

/**
 * The first directory on the way to `path` this user may not look into (`closedOnTheWay`: every link on the way
 * followed, so never a link), said with its owner and the chmod that lets this user through it: a directory of
 * another user's (`/root`, a 0700 checkout) is only to be looked into, not given away. Undefined when none is found.
 */
export function closedDirectory(path: string): ClosedDir | undefined {
  const dir = closedOnTheWay(path);
  if (dir === undefined) return undefined;
  const uid = process.getuid?.();
  let owner: number | undefined;
  try {
    owner = statSync(dir).uid;
  } catch {}
  if (owner === undefined || owner === uid)
    return { dir, named: dir, fix: `let this user look into it (chmod u+x ${dir})` };
  return {
    dir,
    owner,
    named: `${dir} (owned by uid ${owner})`,
    fix: `let this user look into it (chmod o+x ${dir}, as its owner or root)`,
  };
}
