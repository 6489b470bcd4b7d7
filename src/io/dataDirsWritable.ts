import { accessSync, constants, type Dirent, readdirSync, statSync } from "node:fs";
import { userInfo } from "node:os";
import { join } from "node:path";

/**
 * The directories the gateway writes in SVC_HOME and in each profile's directory, and whether what is in
 * them is looked at too (the run workspaces are agents' checkouts: only the directory itself).
 */
const HOME_DIRS: readonly (readonly [name: string, deep: boolean])[] = [
  ["logs", true],
  ["state", true],
  ["deliveries", true],
  ["workspaces", false],
];
const PROFILE_DIRS: readonly string[] = ["sessions", "cron", "mcp-tokens", "mcp-cache"];

/**
 * At most this many entries of each directory are looked at by the start, so a start on years of sessions
 * stays quick: each costs a few µs with the disk's cache warm (~60 ms for 20,000) and far more cold. Each
 * directory has its own count, so a large one (logs, sessions) does not leave the others unchecked.
 * `svc config check` looks at every entry.
 */
export const START_MAX_ENTRIES = 20_000;

/** An entry this user cannot write (or read), with why. */
interface Refused {
  readonly path: string;
  readonly owner: number;
  readonly code: string;
}

/** The user svc runs as, by name where it has one (a container's arbitrary uid may have none). */
export function userName(): string {
  try {
    return userInfo().username;
  } catch {
    return String(process.getuid?.() ?? "this user");
  }
}

function refusal(path: string, mode: number): Refused | undefined {
  try {
    accessSync(path, mode);
    return undefined;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined; // removed meanwhile
    let owner = -1;
    try {
      owner = statSync(path).uid;
    } catch {}
    return { path, owner, code: code ?? "EACCES" };
  }
}

/** The first entry under `dir` (itself included) this user cannot read and write. */
function firstRefused(dir: string, deep: boolean, budget: { left: number }): Refused | undefined {
  const own = refusal(dir, constants.R_OK | constants.W_OK | constants.X_OK);
  if (own !== undefined || !deep) return own;
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return undefined;
  }
  for (const entry of entries) {
    if (--budget.left < 0) return undefined;
    const path = join(dir, entry.name);
    // Symbolic links are left alone: where they lead is the user's choice.
    if (entry.isDirectory()) {
      const found = firstRefused(path, true, budget);
      if (found !== undefined) return found;
    } else if (entry.isFile()) {
      const found = refusal(path, constants.R_OK | constants.W_OK);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/** The data directories that exist: SVC_HOME's, then each profile's. */
function dataDirs(home: string): (readonly [dir: string, deep: boolean])[] {
  const roots = [home];
  try {
    for (const entry of readdirSync(join(home, "profiles"), { withFileTypes: true }))
      if (entry.isDirectory()) roots.push(join(home, "profiles", entry.name));
  } catch {}
  const dirs: (readonly [string, boolean])[] = HOME_DIRS.map(([name, deep]) => [join(home, name), deep]);
  for (const root of roots) for (const name of PROFILE_DIRS) dirs.push([join(root, name), true]);
  return dirs.filter(([dir]) => isDirectory(dir));
}

/** Whether `dir` is a directory: a link into a loop of links (ELOOP) is none, named by the checks of what it holds. */
function isDirectory(dir: string): boolean {
  try {
    return statSync(dir, { throwIfNoEntry: false })?.isDirectory() === true;
  } catch {
    return false;
  }
}

/**
 * Why the gateway could not write its data directories (a `sessions/` left by `sudo svc gateway run`, a
 * volume restored as root): one problem naming each directory and the one command that fixes them all,
 * found before anything listens, instead of one error per run, per store, per file once requests came in.
 * Undefined when each can be written (always for root, whom permissions do not stop).
 */
export function dataDirsProblem(
  home: string,
  /** Entries looked at in each directory, at most (`START_MAX_ENTRIES` for the start; default: all). */
  maxEntries: number = Number.POSITIVE_INFINITY,
): string | undefined {
  const found: (readonly [dir: string, refused: Refused])[] = [];
  for (const [dir, deep] of dataDirs(home)) {
    const refused = firstRefused(dir, deep, { left: maxEntries });
    if (refused !== undefined) found.push([dir, refused]);
  }
  if (found.length === 0) return undefined;
  const uid = process.getuid?.();
  const user = userName();
  const named = found.map(([dir, refused]) => {
    const notes = [
      refused.path === dir ? "" : refused.path,
      refused.owner === uid || refused.owner < 0 ? "" : `owned by uid ${refused.owner}`,
    ].filter((note) => note !== "");
    return notes.length === 0 ? dir : `${dir} (${notes.join(", ")})`;
  });
  const dirs = found.map(([dir]) => dir).join(" ");
  const readOnly = found.some(([, refused]) => refused.code === "EROFS");
  const others = found.some(([, refused]) => refused.owner >= 0 && refused.owner !== uid);
  const fix = readOnly
    ? "they are on a read-only file system: mount it read-write"
    : others
      ? `give them to this user: chown -R ${user} ${dirs} (as root)`
      : `make them writable: chmod -R u+rwX ${dirs}`;
  return `${named.join(", ")}: cannot be written by this user (${user}${uid === undefined ? "" : `, uid ${uid}`}) — the gateway keeps its sessions, stores and logs there: ${fix}, then start it again`;
}
