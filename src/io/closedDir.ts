import { statSync } from "node:fs";
import { closedOnTheWay } from "./linkChain.js";
import { systemOrHome } from "./systemOrHome.js";

/** A directory this user may not look into, as a message says it, and what lets this user through. */
export interface ClosedDir {
  readonly dir: string;
  /** Its owner's uid when another user's. */
  readonly owner?: number;
  /** `<dir> (owned by uid 0)`, with no owner for this user's own. */
  readonly named: string;
  /**
   * `let this user look into it (chmod o+x <dir>, as its owner or root)` (`chmod u+x <dir>` for its own); none for one
   * of the system's own directories or another user's home (`notToOpen`), whose caller says what to point elsewhere.
   */
  readonly fix?: string;
  /** Why `dir` is not to be opened to this user (`systemOrHome`: `is one of the system's own directories`). */
  readonly notToOpen?: string;
}

/**
 * What to say of a closed directory `closed` not to be opened (`notToOpen`), and what to do instead (`instead`):
 * `/root is one of the system's own directories, not to be opened to this user: <instead>`; `closed.fix` else, or
 * `instead` after it (`…, or <instead>`) when `both`.
 */
export function closedFix(closed: ClosedDir, instead: string, both = false): string {
  if (closed.fix === undefined)
    return `${closed.dir} ${closed.notToOpen ?? "is not this user's"}, not to be opened to this user: ${instead}`;
  return both ? `${closed.fix}, or ${instead}` : closed.fix;
}

/**
 * The first directory on the way to `path` this user may not look into (`closedOnTheWay`: every link on the way
 * followed, so never a link), said with its owner and the chmod that lets this user through it: a directory of
 * another user's (a 0700 checkout) is only to be looked into, not given away; one of the system's own (`/root`) or
 * another user's home is not even to be opened (`notToOpen`, no `fix`): following a chmod of it would open it to
 * every user, and what lies behind it is no place of svc's. Undefined when none is found. `passwd`: where the users
 * are read, `access` how search permission is asked (a test's).
 */
export function closedDirectory(
  path: string,
  passwd?: string,
  access?: (dir: string, mode: number) => void,
): ClosedDir | undefined {
  const dir = closedOnTheWay(path, access);
  if (dir === undefined) return undefined;
  const uid = process.getuid?.();
  let owner: number | undefined;
  try {
    owner = statSync(dir).uid;
  } catch {}
  const own = owner === undefined || owner === uid;
  const said: Pick<ClosedDir, "dir" | "owner" | "named"> =
    owner === undefined || own
      ? { dir, named: dir }
      : { dir, owner, named: `${dir} (owned by uid ${owner})` };
  const notToOpen = systemOrHome(dir, passwd);
  if (notToOpen !== undefined) return { ...said, notToOpen };
  return {
    ...said,
    fix: own
      ? `let this user look into it (chmod u+x ${dir})`
      : `let this user look into it (chmod o+x ${dir}, as its owner or root)`,
  };
}
