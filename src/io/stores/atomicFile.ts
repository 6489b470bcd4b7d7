import { randomBytes } from "node:crypto";
import {
  close,
  closeSync,
  fchmodSync,
  fchownSync,
  fsync,
  fsyncSync,
  lstatSync,
  open,
  openSync,
  readdirSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  write,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { promisify } from "node:util";
import { DEFAULT_PROFILE, svcPaths } from "../../config/paths.js";
import { SvcError } from "../../errors.js";
import { writeBytesSync } from "../batchedWriter.js";
import { linkTargetSync } from "../linkChain.js";
import { makeStoreDirs, refusingDir } from "../makeDirs.js";
import { noDirectoryAt } from "../noDirectoryAt.js";
import { otherPidNamespace, pidNamespaceOfTag, pidNamespaceTag } from "../pidNamespace.js";
import { processAlive } from "../processAlive.js";
import { existingProfiles } from "../profiles.js";

/** Why a write found no room, and what makes room, as the user can act on it. */
const NO_ROOM: Readonly<Record<string, readonly [reason: string, fix: string]>> = {
  ENOSPC: ["the disk is full (ENOSPC)", "free some space"],
  EDQUOT: ["the disk quota is used up (EDQUOT)", "free some space or raise the quota"],
  EFBIG: ["the file would pass the size limit for files (EFBIG)", "raise the limit (ulimit -f)"],
};

function noRoomFor(err: unknown): readonly [reason: string, fix: string] | undefined {
  return NO_ROOM[(err as NodeJS.ErrnoException | undefined)?.code ?? ""];
}

/** For a write that found no room (a full disk, a used-up quota, the file-size limit): why, and what makes room. */
export function noRoomProblem(err: unknown): string | undefined {
  const noRoom = noRoomFor(err);
  return noRoom === undefined ? undefined : `${noRoom[0]} — ${noRoom[1]}`;
}

const notPermitted =
  (code: string) =>
  (dir: string): readonly [reason: string, fix: string] => [
    `this user may not create files in ${dir} (${code})`,
    "fix that directory's owner or permissions",
  ];

/** Why a directory took no new file (the temp copy, the lock), and what lets it, as the user can act on it. */
const NO_ENTRY: Readonly<Record<string, (dir: string) => readonly [reason: string, fix: string]>> = {
  EACCES: notPermitted("EACCES"),
  EPERM: notPermitted("EPERM"),
  EROFS: (dir) => [
    `${dir} is on a read-only file system (EROFS)`,
    "make it writable (for a link into a read-only place, put a copy of the file in the link's place)",
  ],
};

/**
 * A write to `path` that found no room, or a directory `dir` where its temp copy or lock could not be
 * created, as the command says it: the file named, left as it was, and what to do; any other error as it is.
 */
export function unwritableStore(path: string, err: unknown, dir?: string): unknown {
  const code = (err as NodeJS.ErrnoException | undefined)?.code ?? "";
  const noEntry = dir === undefined ? undefined : NO_ENTRY[code]?.(dir);
  const why = noRoomFor(err) ?? noEntry;
  if (why === undefined) return err;
  return new UnwritableStoreError(path, why, err);
}

/**
 * The file standing where `dir` or a directory above it goes, if any: one that is no directory, or a symbolic link
 * that leads nowhere (to nothing, or into a loop of links), which no directory can be made through either.
 */
export function fileInPlaceOf(dir: string): string | undefined {
  for (let at = dir; dirname(at) !== at; at = dirname(at)) {
    let found: ReturnType<typeof statSync>;
    try {
      found = statSync(at, { throwIfNoEntry: false });
    } catch (err) {
      // ELOOP: this name a link into a loop (or one further up: the link itself is found there). ENOTDIR: this name
      // a link to a name below a file (`state -> config.yaml/x`), or a file further up (lstat fails too: no link).
      const code = (err as NodeJS.ErrnoException).code;
      if ((code === "ELOOP" || code === "ENOTDIR") && isLink(at)) return at;
      continue;
    }
    if (found !== undefined) return found.isDirectory() ? undefined : at;
    // Not there: a link to nothing is in the way of the directory all the same (it is not made through it).
    if (isLink(at)) return at;
  }
  return undefined;
}

/** Whether `path` itself is a symbolic link (false when it cannot be looked at). */
function isLink(path: string): boolean {
  try {
    return lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink() === true;
  } catch {
    return false;
  }
}

/**
 * The file `fileInPlaceOf` names, when making `dir` failed for it: Node's bare `EEXIST`/`ENOTDIR` for a file, its
 * `ENOENT`/`ELOOP` for a link to nothing or into a loop of links.
 */
export function fileInTheWay(dir: string, err: unknown): string | undefined {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === "EEXIST" || code === "ENOTDIR" || code === "ENOENT" || code === "ELOOP"
    ? fileInPlaceOf(dir)
    : undefined;
}

/** A store write refused for a reason the user can act on; the message is the command's. */
class UnwritableStoreError extends SvcError {
  constructor(
    readonly path: string,
    readonly why: readonly [reason: string, fix: string],
    cause: unknown,
  ) {
    super("store_unwritable", `${storeProblemText(path, why)}, then run the command again`, { cause });
  }
}

function storeProblemText(path: string, why: readonly [reason: string, fix: string]): string {
  return `cannot write ${path}: ${why[0]} — the file is unchanged; ${why[1]}`;
}

/**
 * A store write failure as the gateway logs it: the file, why and what to do, without the command's
 * "then run the command again" (the gateway writes the file again itself; its line says when).
 */
export function storeProblem(err: unknown): string {
  if (err instanceof UnwritableStoreError) return storeProblemText(err.path, err.why);
  return err instanceof Error ? err.message : String(err);
}

/**
 * Why a store write failed, without the file and the fix (`the disk is full (ENOSPC)`): for a line that names
 * the file itself.
 */
export function storeWriteReason(err: unknown): string {
  if (err instanceof UnwritableStoreError) return err.why[0];
  return err instanceof Error ? err.message : String(err);
}

/**
 * Writes `data` so that readers see either the old or the new file, never a half-written one:
 * temp file in the same directory, fsync, rename, fsync of the directory. The file gets exactly `mode`,
 * whatever the process's umask, and keeps its owner and group where this process may give them.
 */
export function writeFileAtomic(linkOrPath: string, data: string | Uint8Array, mode = 0o600): void {
  const { path, dir, temp, fd } = openTemp(linkOrPath, mode);
  try {
    // All of it: a short write (a disk nearly full, a file-size limit) would otherwise be renamed over
    // the whole store as a cut-off copy.
    writeBytesSync(fd, typeof data === "string" ? Buffer.from(data) : data);
    fsyncSync(fd);
  } catch (err) {
    throw dropTemp(fd, temp, path, err);
  }
  closeSync(fd);
  renameTemp(temp, path);
  try {
    const dirFd = openSync(dir, "r");
    try {
      fsyncSync(dirFd);
    } finally {
      closeSync(dirFd);
    }
  } catch {
    // Some filesystems refuse fsync on directories; the rename itself is still atomic.
  }
}

const writeAsync = promisify(write);
const fsyncAsync = promisify(fsync);
const closeAsync = promisify(close);
const openAsync = promisify(open);

/**
 * `writeFileAtomic` whose write and fsyncs run on libuv's threads, so the event loop is free while a large
 * file reaches the disk (the temp file is made, and renamed into place, synchronously). `onReplaced` runs
 * in the same tick as the rename, before anything else can read the file, so a parse kept for it can be
 * switched to the new bytes before a reader sees them.
 */
export async function writeFileAtomicAsync(
  linkOrPath: string,
  data: Uint8Array,
  mode = 0o600,
  onReplaced?: () => void,
): Promise<void> {
  const { path, dir, temp, fd } = openTemp(linkOrPath, mode);
  try {
    let written = 0;
    while (written < data.length)
      written += (await writeAsync(fd, data, written, data.length - written)).bytesWritten;
    await fsyncAsync(fd);
  } catch (err) {
    throw dropTemp(fd, temp, path, err);
  }
  closeSync(fd);
  renameTemp(temp, path);
  onReplaced?.();
  try {
    const dirFd = await openAsync(dir, "r");
    try {
      await fsyncAsync(dirFd);
    } finally {
      await closeAsync(dirFd);
    }
  } catch {
    // Some filesystems refuse fsync on directories; the rename itself is still atomic.
  }
}

/**
 * The temp copy of `linkOrPath` (a symbolic link resolved), created with exactly `mode` and the owner of
 * the file it replaces, open for writing.
 */
function openTemp(linkOrPath: string, mode: number): { path: string; dir: string; temp: string; fd: number } {
  // A symlinked file (config.yaml or .env kept in a dotfiles repository) is updated where it lives: a
  // rename over the link would replace it with a copy and leave the real file behind unchanged.
  const path = resolveLink(linkOrPath);
  const dir = dirname(path);
  try {
    makeStoreDirs(dir);
  } catch (err) {
    const inTheWay = fileInTheWay(dir, err);
    if (inTheWay !== undefined) {
      const { said, fix, home } = noDirectoryAt(inTheWay);
      // SVC_HOME itself, or a name on the way to it: said by the caller, with SVC_HOME to set, once.
      if (home) throw err;
      throw new UnwritableStoreError(path, [said, `${fix} (svc makes the directory)`], err);
    }
    throw unwritableStore(path, err, refusingDir(err, dir));
  }
  const tag = pidNamespaceTag();
  const writer = tag === undefined ? String(process.pid) : `${process.pid}.${tag}`;
  const temp = join(dir, `.${basename(path)}.${writer}.${randomBytes(6).toString("hex")}.tmp`);
  let fd: number;
  try {
    fd = openSync(temp, "wx", mode);
  } catch (err) {
    throw unwritableStore(path, err, dir);
  }
  try {
    // The mode asked for, not less what the umask takes off: an edited file keeps its mode (a 0660
    // config.yaml shared by a group stays group-writable under umask 022).
    fchmodSync(fd, mode);
    keepOwner(fd, path);
  } catch (err) {
    throw dropTemp(fd, temp, path, err);
  }
  return { path, dir, temp, fd };
}

/** Closes and removes a temp copy whose write failed; the error to throw. */
function dropTemp(fd: number, temp: string, path: string, err: unknown): unknown {
  closeSync(fd);
  rmSync(temp, { force: true });
  return unwritableStore(path, err);
}

function renameTemp(temp: string, path: string): void {
  try {
    renameSync(temp, path);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
}

/**
 * The copy gets the owner and group of the file it replaces — a new file those of its directory — where this
 * process may give them (root, or a group it is in): root editing another user's store (`sudo svc webhook
 * subscribe`, `sudo svc cron create`) would otherwise leave a root-owned 0600 file the gateway running as that
 * user cannot read.
 */
function keepOwner(fd: number, path: string): void {
  const was = statSync(path, { throwIfNoEntry: false }) ?? statSync(dirname(path), { throwIfNoEntry: false });
  if (was === undefined || (was.uid === process.getuid?.() && was.gid === process.getgid?.())) return;
  try {
    fchownSync(fd, was.uid, was.gid);
  } catch {
    // Not ours to give (EPERM): the copy is this user's, as any editor's would be.
  }
}

/** The file a write to `path` replaces: the target of a symbolic link, followed as far as it leads. */
export function resolveLink(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    // Not there yet: written as named, unless it is a link to a file not made yet in a directory that
    // is there (a dotfiles checkout whose file the first write creates): written where it points, the
    // link stays. A link into a directory that is gone (an unmounted disk) is not followed: nothing is
    // created there.
    // A loop of links (no target) is written as named.
    const target = linkTargetSync(path);
    return target !== undefined && isDirectory(dirname(target)) ? target : path;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

export function writeJsonAtomic(path: string, value: unknown, mode = 0o600): void {
  writeFileAtomic(path, `${JSON.stringify(value, null, 2)}\n`, mode);
}

/**
 * `.<name>.<pid>.ns<namespace>.<12 hex>.tmp`, the temp file `writeFileAtomic` renames over `<name>` (the
 * digits of its writer's PID namespace, `pid:[<namespace>]`; none where /proc does not show it, or written
 * by an older svc).
 */
const TEMP_FILE = /^\.(.+)\.(\d+)(?:\.ns(\d+))?\.[0-9a-f]{12}\.tmp$/;

/**
 * A lock's own files (`fileLock.ts`): `<name>.lock.<pid>.ns<namespace>.<8 hex>.new`, made whole before it is
 * linked into place (`gateway.pid` is made so too), and `.stale`, a dead holder's lock moved aside to be removed.
 */
const LOCK_LEFTOVER = /^(?:(.+)\.lock|gateway\.pid)\.(\d+)(?:\.ns(\d+))?\.[0-9a-f]{8}\.(?:new|stale)$/;

/**
 * A temp file of a writer of another PID namespace, whose pid cannot be checked here, is removed once
 * nothing has written to it for this long: a write in progress changes it all along, and renames it a
 * moment after its last byte.
 */
export const OTHER_NAMESPACE_TEMP_MS = 3_600_000;

/**
 * Removes the temp files of atomic writes cut short by a killed process (SIGKILL mid-write): the store
 * files themselves are whole, but the half-written copies would stay beside them for good; so would a lock's
 * own files cut off between two steps (`LOCK_LEFTOVER`). Files of
 * another process still running (a CLI command writing right now) are left alone. With `onlyFor`, only the temp
 * files of those file names are touched (a directory that is not svc's own). Returns what was removed.
 */
export function removeStaleTempFiles(dir: string, onlyFor?: ReadonlySet<string>): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const match = TEMP_FILE.exec(name);
    // A lock's files are beside the file it locks (a link's target): elsewhere, those of the names asked only.
    const lockMatch = LOCK_LEFTOVER.exec(name);
    const of = lockMatch === null ? match?.[1] : lockMatch[1];
    if ((match === null && lockMatch === null) || (onlyFor !== undefined && !onlyFor.has(of ?? ""))) continue;
    // A writer of another PID namespace (a CLI command in a container sharing SVC_HOME with the host, or
    // the other way round) is another process here, or none, under its pid: its file is judged by its age.
    const namespace = lockMatch === null ? match?.[3] : lockMatch[3];
    if (namespace !== undefined && otherPidNamespace(pidNamespaceOfTag(namespace))) {
      if (!untouchedFor(join(dir, name), OTHER_NAMESPACE_TEMP_MS)) continue;
    } else {
      // This process writes nothing while it cleans up: a file named with its pid was left by an earlier
      // process that had the same pid (a container's pid 1 after a restart).
      const pid = Number(lockMatch?.[2] ?? match?.[2]);
      if (pid !== process.pid && processAlive(pid)) continue;
    }
    try {
      rmSync(join(dir, name), { force: true });
      removed.push(join(dir, name));
    } catch {
      // Not ours to remove (permissions): left as it is.
    }
  }
  return removed;
}

/** Whether nothing has changed `path` for `ms` by the system clock (false when it is gone). */
function untouchedFor(path: string, ms: number): boolean {
  try {
    const stats = statSync(path, { throwIfNoEntry: false });
    return stats !== undefined && Date.now() - stats.mtimeMs > ms;
  } catch {
    return false; // not ours to look at (permissions): left as it is
  }
}

/**
 * The startup clean-up of every profile's stores. svc's own directories (`$SVC_HOME`, each profile's
 * root, its `cron/`, `mcp-cache/`, `mcp-tokens/` and `sessions/`) are scanned whole; a store file that is a symlink
 * (config.yaml kept in a dotfiles repository) was written beside its target, so the target's directory
 * is scanned too, for the temp files of that target's name only.
 */
export function removeStaleStoreTempFiles(home: string): string[] {
  const own = new Set<string>();
  const storeFiles: string[] = [];
  for (const profile of profilesOf(home)) {
    const paths = svcPaths(home, profile);
    for (const dir of [paths.root, dirname(paths.cronJobs), paths.mcpCache, paths.mcpTokens, paths.sessions])
      own.add(resolveLink(dir));
    storeFiles.push(paths.config, paths.env, paths.subscriptions, paths.pendingRuns, paths.seenIds);
    storeFiles.push(paths.cronJobs);
  }
  const elsewhere = new Map<string, Set<string>>();
  for (const file of storeFiles) {
    const target = resolveLink(file);
    if (target === file || own.has(dirname(target))) continue;
    const names = elsewhere.get(dirname(target)) ?? new Set<string>();
    names.add(basename(target));
    elsewhere.set(dirname(target), names);
  }
  return [
    ...[...own].flatMap((dir) => removeStaleTempFiles(dir)),
    ...[...elsewhere].flatMap(([dir, names]) => removeStaleTempFiles(dir, names)),
  ];
}

/** A clean-up never stops a start: an unreadable `profiles/` (or a file of that name) leaves the default. */
function profilesOf(home: string): string[] {
  try {
    return existingProfiles(home);
  } catch {
    return [DEFAULT_PROFILE];
  }
}
