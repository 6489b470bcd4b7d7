import {
  accessSync,
  constants,
  type Dirent,
  lstatSync,
  opendirSync,
  readdirSync,
  realpathSync,
  statSync,
} from "node:fs";
import { join, resolve } from "node:path";
import { DEFAULT_PROFILE, PROFILE_NAME } from "../config/paths.js";
import { type ClosedDir, closedDirectory, closedFix } from "./closedDir.js";
import { LOOP_OF_LINKS, linkTargetSync } from "./linkChain.js";
import { pathWithin } from "./pathWithin.js";
import { isProfileDir } from "./profiles.js";
import { systemOrHome } from "./systemOrHome.js";
import { terminalText } from "./terminalText.js";
import { thisUser, userName } from "./userName.js";

export { systemOrHome } from "./systemOrHome.js";

/**
 * The directories the gateway writes in SVC_HOME and in each profile's directory, what it keeps in each, whether
 * what is in them is looked at too (the run workspaces are agents' checkouts: only the directory itself), and the
 * names svc itself writes at the top of each (with `OWN_ANYWHERE`; a directory's with a final `/`): a directory a data directory's link leads to
 * that holds only those is svc's data, to be given to this user (`linkTargetToGive`).
 */
const HOME_DIRS: readonly (readonly [name: string, holds: string, deep: boolean, own: RegExp])[] = [
  // gateway.log (the logger), gateway.out (svc gateway start's output of the gateway), and the copies logrotate
  // makes of them (`gateway.log.1`, `gateway.log.2.gz`, `gateway.log-20261207`).
  ["logs", "log", true, /^gateway\.(?:log|out)(?:[.-]\d+)?(?:\.gz)?$/],
  // The journal (journal.ts, segments.ts, dirLock.ts) and the groups' and cron runs' records (gatewayState.ts).
  [
    "state",
    "journal of accepted runs",
    true,
    /^(?:LOCK|journal\.id|journal-\d{6,}\.seg(?:\.tmp)?|agents\/|cron-runs\/)$/,
  ],
  // deliveryHistory.ts: the history, the previous one, and one renamed aside while it is removed.
  ["deliveries", "delivery history", true, /^(?:history(?:\.1)?\.jsonl|\.history-replaced-\d+-\d+\.jsonl)$/],
  // runTools.ts: a directory for each profile (`<profile>/`), holding its runs' (`OWN_SUBDIR_ENTRIES`).
  ["workspaces", "runs' workspaces", false, /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}\/$/],
];
const PROFILE_DIRS: readonly (readonly [name: string, holds: string, own: RegExp])[] = [
  // store.ts: index.json and each chat's transcript under its platform's directory (`<platform>/<chat>.jsonl`),
  // runJournal.ts: webhook-runs/; the transcripts a chat front end sharing the directory writes (.json, .jsonl).
  // (A subdirectory is svc's only when what it holds is too: `OWN_SUBDIR_ENTRIES`.)
  ["sessions", "run sessions", /^(?:[^.].*\.jsonl?|[^.][^/]*\/)$/],
  // cronStore.ts: jobs.json.
  ["cron", "cron jobs", /^jobs\.json$/],
  // tokenStore.ts: `<server>.json`, `.client.json`, `.meta.json`, `.cimd-off`.
  ["mcp-tokens", "MCP logins", /^[^.].*\.(?:json|cimd-off)$/],
  // schemaCache.ts: `<print>.json`; statusFile.ts: status.json.
  ["mcp-cache", "MCP servers' tool lists and status", /^[^.].*\.json$/],
];

/**
 * What svc writes in the subdirectories of a data directory, by the data directory's name and the subdirectory's
 * (with its final `/`; the first rule that names it): a subdirectory of a link's target counts as svc's only when its
 * own entries (the first `TARGET_MAX_ENTRIES`) are svc's too, and those of its subdirectories when `deeper` says what
 * they hold, so a `bin/` or a user's home beside them makes the target a shared one.
 */
const OWN_SUBDIR_ENTRIES: readonly (readonly [dir: string, sub: RegExp, entries: RegExp, deeper?: RegExp])[] =
  [
    // workspace.ts and runTools.ts: a profile's directory holds a directory for each run, named for it
    // (`workspaceDirName`: the run's id in safe characters, `-` and 12 hex digits of its hash), and `-2`, `-3`, ...
    // after a name an earlier run left; what a run's workspace holds is the agent's, not looked at.
    ["workspaces", /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}\/$/, /^[A-Za-z0-9_-]{0,64}-[0-9a-f]{12}(?:-\d+)?\/$/],
    // processGroups.ts: a file named for each process group, and its temp file.
    ["state", /^agents\/$/, /^(?:\d+|\.\d+\.tmp)$/],
    // cronRunNotes.ts: `<pid>-<n>`.
    ["state", /^cron-runs\/$/, /^\d+-\d+$/],
    // runJournal.ts: a journal a day.
    ["sessions", /^webhook-runs\/$/, /^\d{4}-\d{2}-\d{2}\.jsonl$/],
    // store.ts before 282beccf: a webhook run's transcript in its route's directory (`webhook/<route>/<id>.jsonl`);
    // and a chat's of a platform of that name.
    ["sessions", /^webhook\/$/, /^[^.][^/]*(?:\/|\.jsonl?)$/, /^[^.][^/]*\.jsonl$/],
    // store.ts: a platform's directory, holding its chats' transcripts (a chat front end's too: .json, .jsonl).
    ["sessions", /^[^.][^/]*\/$/, /^[^.][^/]*\.jsonl?$/],
  ];

/**
 * What svc writes beside a file of its own in any data directory: `<name>.lock` (fileLock.ts) and the lock's own
 * leftovers, and the temp file of an atomic write (atomicFile.ts); and a file system's `lost+found`, at the top of
 * a volume made for the directory.
 */
const OWN_ANYWHERE =
  /^(?:lost\+found\/|.+\.lock|.+\.lock\.\d+(?:\.ns\d+)?\.[0-9a-f]{8}\.(?:new|stale)|\..+\.\d+(?:\.ns\d+)?\.[0-9a-f]{12}\.tmp)$/;

/** The names svc writes at the top of each data directory (a directory's with a final `/`), by its name. */
const OWN_ENTRIES: ReadonlyMap<string, RegExp> = new Map([
  ...HOME_DIRS.map(([name, , , own]) => [name, own] as const),
  ...PROFILE_DIRS.map(([name, , own]) => [name, own] as const),
]);

/**
 * At most this many entries of a directory a data directory's link leads to are looked at to tell svc's own data
 * from a shared directory's: a foreign entry is found among the first few of a shared one.
 */
const TARGET_MAX_ENTRIES = 200;

/** The one data directory whose store names a loop of links itself (`unusableCronStore`), as its readers do. */
const OWN_LOOP_CHECK = "cron";

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

/**
 * The entry a file system keeps at the top of its root for the files its repair finds (ext4's, root's with mode
 * 0700): at the top of a data directory that is a mount point of its own (a volume at `SVC_HOME/state`). svc never
 * writes into it.
 */
const LOST_FOUND = "lost+found";

/** The first entry under `dir` (itself included) this user cannot read and write. */
function firstRefused(dir: string, deep: boolean, budget: { left: number }, top = true): Refused | undefined {
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
    if (top && entry.name === LOST_FOUND) continue;
    const path = join(dir, entry.name);
    // Symbolic links are left alone: where they lead is the user's choice.
    if (entry.isDirectory()) {
      const found = firstRefused(path, true, budget, false);
      if (found !== undefined) return found;
    } else if (entry.isFile()) {
      const found = refusal(path, constants.R_OK | constants.W_OK);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/**
 * A data directory as found: one to look into (`real`: where it leads, when its own name is a symbolic link), one in
 * a loop of links, or one this user may not get to: by a directory of svc's own it may not look into (`refused`,
 * that directory), or by one elsewhere on the way to where a link leads (`closed`: `/root`, a private checkout).
 */
type Found =
  | {
      readonly kind: "dir";
      readonly dir: string;
      /** The data directory's own name (`sessions`). */
      readonly name: string;
      readonly deep: boolean;
      readonly real?: string;
      /** SVC_HOME, or the profile's directory the data directory is of. */
      readonly root: string;
    }
  | { readonly kind: "loop"; readonly dir: string; readonly holds: string }
  | { readonly kind: "refused"; readonly dir: string; readonly refused: Refused }
  | { readonly kind: "closed"; readonly dir: string; readonly holds: string; readonly closed: ClosedDir };

/**
 * The data directories that exist, SVC_HOME's then each profile's, with each in a loop of links (ELOOP: no
 * directory, and nothing the gateway keeps there can be written) and each this user may not get to (a
 * directory on the way it may not look into, or on the way to where its link leads: that directory, named once,
 * as one it cannot write when it is SVC_HOME's, in it, or a profile's directory, else as one to let this user look
 * into; the data directory itself when none is found).
 */
function dataDirs(home: string): Found[] {
  const roots = [home];
  try {
    // Only a profile's directory, as the profiles are found (a directory, or a symbolic link to one: a profile kept
    // in a dotfiles checkout): a `lost+found` or another directory whose name is no profile's is none of the
    // gateway's, whoever owns it.
    const profiles = join(home, "profiles");
    for (const entry of readdirSync(profiles, { withFileTypes: true }))
      if (entry.name !== DEFAULT_PROFILE && PROFILE_NAME.test(entry.name) && isProfileDir(profiles, entry))
        roots.push(join(profiles, entry.name));
  } catch {}
  const dirs: (readonly [dir: string, name: string, holds: string, deep: boolean, root: string])[] =
    HOME_DIRS.map(([name, holds, deep]) => [join(home, name), name, holds, deep, home]);
  for (const root of roots)
    for (const [name, holds] of PROFILE_DIRS) dirs.push([join(root, name), name, holds, true, root]);
  const found: Found[] = [];
  const blockers = new Set<string>();
  for (const [dir, name, holds, deep, root] of dirs) {
    try {
      if (statSync(dir, { throwIfNoEntry: false })?.isDirectory() === true)
        found.push({ kind: "dir", dir, name, deep, root, ...linkedTo(dir) });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ELOOP") {
        if (name !== OWN_LOOP_CHECK) found.push({ kind: "loop", dir, holds });
      } else if (code === "EACCES") {
        const closed = closedDirectory(dir);
        if (blockers.has(closed?.dir ?? dir)) continue;
        blockers.add(closed?.dir ?? dir);
        if (closed !== undefined && !svcOwn(closed.dir, home, root))
          found.push({ kind: "closed", dir, holds, closed });
        else {
          const refused = blockedOnTheWay(dir, closed?.dir);
          found.push({ kind: "refused", dir: refused.path, refused });
        }
      } else if (code !== "ENOTDIR") throw err;
    }
  }
  return found;
}

/**
 * Where the data directory `dir` leads when its own name is a symbolic link (`sessions -> /data/sessions`): its
 * entries are looked at there and named so, and the fix names it, since `chown -R` and `chmod -R` change only the
 * link itself when given one.
 */
function linkedTo(dir: string): { readonly real?: string } {
  try {
    return lstatSync(dir).isSymbolicLink() ? { real: realpathSync(dir) } : {};
  } catch {
    return {};
  }
}

/**
 * Whether `closed`, a directory this user may not look into on the way to a data directory of `root` (SVC_HOME or a
 * profile's directory), is svc's own, to give to this user: SVC_HOME or one in it, or the profile's directory as its
 * link leads (a checkout of root's with mode 0700). Any other (`/srv/private`, or `/root` above a profile linked into
 * it) is only to be looked into: a `chown -R` of it would give away what is not svc's.
 */
function svcOwn(closed: string, home: string, root: string): boolean {
  const within = (dir: string) => pathWithin(closed, dir);
  const real = (dir: string) => {
    try {
      return realpathSync(dir);
    } catch {
      return linkTargetSync(dir) ?? dir;
    }
  };
  return within(resolve(home)) || within(real(home)) || within(real(root));
}

/**
 * Whether `dir`, a directory this user may not look into, is svc's own (`svcOwn`): SVC_HOME `home` or one in it, or
 * a profile's directory as its link leads or one in it; a `chown -R` of it gives this user what is svc's alone.
 */
export function isSvcOwnDir(dir: string, home: string): boolean {
  if (svcOwn(dir, home, home)) return true;
  try {
    const profiles = join(home, "profiles");
    for (const entry of readdirSync(profiles, { withFileTypes: true }))
      if (PROFILE_NAME.test(entry.name) && svcOwn(dir, home, join(profiles, entry.name))) return true;
  } catch {}
  return false;
}

/**
 * For a data directory this user may not get to: the directory of svc's own on the way that refuses it, `closed`
 * (a profile's directory of root's with mode 0700, or the checkout its link leads to), with its owner; else the
 * data directory itself, refused.
 */
function blockedOnTheWay(dir: string, closed: string | undefined): Refused {
  let owner = -1;
  try {
    owner = closed === undefined ? lstatSync(dir).uid : statSync(closed).uid;
  } catch {}
  return { path: closed ?? dir, owner, code: "EACCES" };
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
  const found: Unwritable[] = [];
  const loops: string[] = [];
  for (const dir of dataDirs(home)) {
    if (dir.kind === "loop") {
      loops.push(
        `${dir.dir}: a symbolic link into ${LOOP_OF_LINKS} — the gateway keeps its ${dir.holds} there: point the link at a directory, or remove the link`,
      );
      continue;
    }
    if (dir.kind === "closed") {
      loops.push(
        `${dir.dir}: on the way to it, ${dir.closed.named} cannot be looked into by ${thisUser()} — the gateway keeps its ${dir.holds} there: ${closedFix(dir.closed, "point the link at a directory this user can reach", true)}, then start it again`,
      );
      continue;
    }
    const real = dir.kind === "dir" ? dir.real : undefined;
    const refused =
      dir.kind === "refused" ? dir.refused : firstRefused(real ?? dir.dir, dir.deep, { left: maxEntries });
    if (refused === undefined) continue;
    const target =
      dir.kind === "dir" && real !== undefined ? linkTargetToGive(real, dir.name, home, dir.root) : "give";
    if (target !== "give" && real !== undefined)
      loops.push(sharedTargetProblem(dir.dir, real, refused, target));
    else found.push({ dir: dir.dir, refused, ...(real === undefined ? {} : { real }) });
  }
  const refused = writeProblem(found);
  if (loops.length === 0) return refused;
  return [...loops, ...(refused === undefined ? [] : [refused])].join("\n");
}

/**
 * Whether `real`, where a data directory `name`'s symbolic link of `root` leads, is svc's to give to this user with
 * a `chown -R`: svc's own (`svcOwn`: in SVC_HOME, or in the profile's directory as its link leads), or holding only
 * what svc writes in that data directory (this user's own directories too: its home may hold root's `.ssh/`) (`OWN_ENTRIES`, and in its subdirectories
 * `OWN_SUBDIR_ENTRIES`; none, when made for it): "give". Never one of the system's directories or another user's home, nor
 * one below either (`/etc/ssl/private/x`, `alice/appdata`) or holding either (`systemOrHome`), whatever it holds. Else why not: the first entry svc does not keep there
 * (`deliveries -> /var/log`: root's, holding apt/, journal/, syslog), a shared directory a `chown -R` would give away all of, looked
 * for past a subdirectory this user cannot list (`sessions -> appdata` holding root's 0700 `private/` and a readable
 * `public/id_rsa`: the key); else the first subdirectory this user cannot list (`closed`, with its owner and mode), so
 * what the target holds is unknown; or `undefined` when this user cannot list the target itself (root's, mode 0700).
 * `list`: how a directory's entries are read (`listed`; a test's, to refuse one as another user is refused); `passwd`
 * where the users' homes are read (a test's).
 */
export function linkTargetToGive(
  real: string,
  name: string,
  home: string,
  root: string,
  list: (dir: string) => string[] = listed,
  passwd?: string,
): TargetAnswer {
  const system = systemOrHome(real, passwd);
  if (system !== undefined) return { why: system };
  if (svcOwn(real, home, root)) return "give";
  const own = OWN_ENTRIES.get(name);
  const holds = (entry: string) => ({
    why: `is not svc's own and holds ${terminalText(entry)}, which svc does not keep there`,
  });
  const firstForeign = (dir: string, mine: (entry: string) => boolean) =>
    list(dir).find((entry) => !OWN_ANYWHERE.test(entry) && !mine(entry));
  let entries: string[];
  try {
    entries = list(real);
  } catch {
    return undefined;
  }
  // This user's own directory (its home: a service account's /var/lib/svc) is looked into as any other: a
  // chown -R of it would give this user whatever root left there beside svc's data (.ssh/, a binary).
  const foreign = entries.find((entry) => !OWN_ANYWHERE.test(entry) && own?.test(entry) !== true);
  if (foreign !== undefined) return holds(foreign);
  // A subdirectory this user cannot list is named only when no foreign entry is found anywhere else: one it can
  // see (a key beside root's private directory) is the surer answer.
  let closed: string | undefined;
  const unlisted = (dir: string, err: unknown) => {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return; // removed meanwhile
    closed ??= closedNamed(dir, err);
  };
  for (const entry of entries) {
    if (!entry.endsWith("/") || OWN_ANYWHERE.test(entry)) continue;
    const rule = OWN_SUBDIR_ENTRIES.find(([dir, sub]) => dir === name && sub.test(entry));
    if (rule === undefined) continue;
    const [, , inside, deeper] = rule;
    const sub = join(real, entry);
    let subEntries: string[];
    try {
      subEntries = list(sub);
    } catch (err) {
      unlisted(sub, err);
      continue;
    }
    const foreign = subEntries.find((found) => !OWN_ANYWHERE.test(found) && !inside.test(found));
    if (foreign !== undefined) return holds(`${entry}${foreign}`);
    if (deeper === undefined) continue;
    for (const inner of subEntries) {
      if (!inner.endsWith("/") || OWN_ANYWHERE.test(inner)) continue;
      let below: string | undefined;
      try {
        below = firstForeign(join(sub, inner), (found) => deeper.test(found));
      } catch (err) {
        unlisted(join(sub, inner), err);
        continue;
      }
      if (below !== undefined) return holds(`${entry}${inner}${below}`);
    }
  }
  return closed === undefined ? "give" : { closed };
}

/**
 * `linkTargetToGive`'s answer: "give"; why not (`why`); a subdirectory of it this user cannot look into (`closed`,
 * named with its owner and mode), so what the target holds is unknown; or `undefined` when the target itself cannot be.
 */
export type TargetAnswer = "give" | { readonly why: string } | { readonly closed: string } | undefined;

/** A subdirectory `dir` of a link's target this user could not list (`err`), named with its owner and mode. */
function closedNamed(dir: string, err: unknown): string {
  let notes = (err as NodeJS.ErrnoException).code ?? "EACCES";
  try {
    const stat = statSync(dir);
    notes = `owned by uid ${stat.uid}, mode ${(stat.mode & 0o7777).toString(8).padStart(4, "0")}`;
  } catch {}
  return `${terminalText(dir.replace(/\/$/, ""))} (${notes})`;
}

/** The first `TARGET_MAX_ENTRIES` entries of `dir`, a directory's with a final `/`. Throws when it cannot be listed. */
function listed(dir: string): string[] {
  const opened = opendirSync(dir);
  const names: string[] = [];
  try {
    for (
      let entry = opened.readSync();
      entry !== null && names.length < TARGET_MAX_ENTRIES;
      entry = opened.readSync()
    )
      names.push(entry.isDirectory() ? `${entry.name}/` : entry.name);
  } finally {
    opened.closeSync();
  }
  return names.sort();
}

/**
 * A data directory `dir` whose symbolic link leads into `real`, another user's directory that is not svc's own
 * (`linkTargetToGive`): one holding what svc does not keep there, or the system's or a user's home, is not offered to be given away, only
 * to point the link at a directory of svc's own; one this user cannot look into is said so, with the `chown -R`
 * that fixes it as root's choice once root has looked.
 */
function sharedTargetProblem(
  dir: string,
  real: string,
  refused: Refused,
  target: Exclude<TargetAnswer, "give">,
): string {
  const uid = process.getuid?.();
  const user = userName();
  // The target itself refusing is said once, with its owner, below.
  const notes =
    refused.path === real
      ? []
      : [
          refused.path,
          refused.owner === uid || refused.owner < 0 ? "" : `owned by uid ${refused.owner}`,
        ].filter((note) => note !== "");
  const at = `${dir} → ${real}${notes.length === 0 ? "" : ` (${notes.join(", ")})`}`;
  const owner = (() => {
    try {
      return statSync(real).uid;
    } catch {
      return -1;
    }
  })();
  const whose = owner < 0 ? "" : ` (owned by uid ${owner})`;
  const said = `${at}: cannot be written by this user (${user}${uid === undefined ? "" : `, uid ${uid}`}) — ${real}${whose}`;
  if (target !== undefined && "closed" in target)
    return `${said} holds ${target.closed}, which cannot be looked into by this user, so what it holds is unknown: if it holds only svc's data, give it to this user: chown -R ${user} ${real} (as root); else point the link at a directory of svc's own that this user can write; then start it again`;
  if (target === undefined)
    return `${said} cannot be looked into by this user, so what it holds is unknown: if it holds only svc's data, give it to this user: chown -R ${user} ${real} (as root); else point the link at a directory of svc's own that this user can write; then start it again`;
  return `${said} ${target.why}, so it is not to be given away: point the link at a directory of svc's own that this user can write, then start it again`;
}

/** A data directory this user cannot write: what refused, and where the directory leads when it is a link. */
interface Unwritable {
  readonly dir: string;
  readonly refused: Refused;
  readonly real?: string;
}

/**
 * The directories this user cannot write, each named, and the one command that fixes them all. One that is a
 * symbolic link is named with where it leads (`<home>/sessions → /data/sessions`), and the command names that.
 */
function writeProblem(found: readonly Unwritable[]): string | undefined {
  if (found.length === 0) return undefined;
  const uid = process.getuid?.();
  const user = userName();
  const named = found.map(({ dir, refused, real }) => {
    const notes = [
      refused.path === (real ?? dir) ? "" : refused.path,
      refused.owner === uid || refused.owner < 0 ? "" : `owned by uid ${refused.owner}`,
    ].filter((note) => note !== "");
    const at = real === undefined ? dir : `${dir} → ${real}`;
    return notes.length === 0 ? at : `${at} (${notes.join(", ")})`;
  });
  const dirs = found.map(({ dir, real }) => real ?? dir).join(" ");
  const readOnly = found.some(({ refused }) => refused.code === "EROFS");
  const others = found.some(({ refused }) => refused.owner >= 0 && refused.owner !== uid);
  const fix = readOnly
    ? "they are on a read-only file system: mount it read-write"
    : others
      ? `give them to this user: chown -R ${user} ${dirs} (as root)`
      : `make them writable: chmod -R u+rwX ${dirs}`;
  return `${named.join(", ")}: cannot be written by this user (${user}${uid === undefined ? "" : `, uid ${uid}`}) — the gateway keeps its sessions, stores and logs there: ${fix}, then start it again`;
}
