import { accessSync, constants, lstatSync, realpathSync, type Stats, statfsSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { homeFromUser } from "../config/paths.js";
import { describeError, SvcError } from "../errors.js";
import { closedDirectory, closedFix } from "./closedDir.js";
import { dataDirsProblem, START_MAX_ENTRIES } from "./dataDirsWritable.js";
import { LOOP_OF_LINKS } from "./linkChain.js";
import {
  INTO_A_LOOP,
  kindOf,
  linkTo,
  linkToNoDirectory,
  type NoDirectory,
  noDirectoryOnTheWay,
} from "./linkTo.js";
import { makeDirs } from "./makeDirs.js";
import { noDirectoryAt } from "./noDirectoryAt.js";
import { ownLink, systemOrHome } from "./systemOrHome.js";
import { thisUser, userName } from "./userName.js";

/**
 * What makes a directory that refused a write writable, by the refusal's code: a read-only file system is
 * remounted and a full disk freed, which no change of owner or permissions does; `otherwise` for the rest.
 */
function writeFix(err: unknown, otherwise: string): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === "EROFS") return "it is on a read-only file system: remount it read-write";
  if (code === "ENOSPC" || code === "EDQUOT") return "free disk space (or raise the user's quota)";
  return otherwise;
}

/**
 * What the refusal says: SVC_HOME, why, and the two ways out. One of the system's own directories or another user's
 * home, or one in it (SVC_HOME=/, /etc, /root, /etc/ssl/private, /home/alice: `systemOrHome`, where it leads), is no
 * directory of svc's to change the owner or permissions of: SVC_HOME is what to set. `passwd`: where the users'
 * homes are read (a test's).
 */
export function homeNotWritable(home: string, err: unknown, passwd?: string): SvcError {
  const notSvcs = systemOrHome(realOrAsIs(home), passwd);
  const fix =
    notSvcs === undefined
      ? `${writeFix(err, "fix its owner or permissions (or free disk space)")}, or set SVC_HOME to a directory this user can write`
      : `${home} ${notSvcs}, not svc's to change: set SVC_HOME to a directory this user can write`;
  return new SvcError(
    "startup_refused",
    `${home}: SVC_HOME cannot be written (${describeError(err)}) — the gateway keeps its pid file, logs, journal and stores there: ${fix}`,
  );
}

/** Where `path` leads, every link followed; `path` itself when that cannot be found. */
function realOrAsIs(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * Why SVC_HOME, below `way`, can be neither made nor used, and what to do. A device, a named pipe or a socket is
 * never to be moved away (`/dev/null`): only SVC_HOME is. When SVC_HOME is unset, its `~/.svc` below HOME (`user`),
 * HOME is named as what leads there, and no SVC_HOME as if one were set. A link on the way is offered to be pointed
 * elsewhere (or its target made) only when it is this user's own (`ownLink`): `/etc/localtime` is the system's, and
 * only SVC_HOME is to be set. `passwd`: where the users' homes are read (a test's).
 */
function noDirectoryProblem(
  home: string,
  way: NoDirectory,
  user: { readonly name: string; readonly dir: string } | undefined,
  passwd?: string,
): string {
  const found: { readonly said: string; readonly fix?: string } =
    way.kind === "loop"
      ? { said: LOOP_OF_LINKS, fix: "point that link at a directory" }
      : way.kind === "file"
        ? // A file on the way to SVC_HOME is no more svc's to move than a device (`SVC_HOME=/etc/passwd/x`).
          { said: `${way.what}, not a directory` }
        : way.kind === "link to a file"
          ? linkToNoDirectory(way.at, way.what)
          : (linkTo(way.at) ?? INTO_A_LOOP);
  const is = way.kind === "file" || ownLink(way.at, passwd) ? found : { said: found.said };
  if (user !== undefined) {
    const at = way.at === user.dir ? ` (${is.said})` : `, and ${way.at}, on the way to it, is ${is.said}`;
    // A file as HOME is no more svc's to move than a device.
    const fix = way.kind === "file" || is.fix === undefined ? "" : `${is.fix}, or `;
    return `${user.name} is ${user.dir}${at}, so svc has no home of its own: ${fix}set SVC_HOME to a directory this user can write`;
  }
  const fix = is.fix === undefined ? "" : `${is.fix}, or `;
  if (way.kind === "loop")
    return `${home}: SVC_HOME is in ${LOOP_OF_LINKS}, on the way to it (${way.at}) — ${fix}set SVC_HOME to another one`;
  return `${home}: SVC_HOME cannot be made: ${way.at}, on the way to it, is ${is.said} — ${fix}set SVC_HOME to another one`;
}

/**
 * Why SVC_HOME cannot be the gateway's data directory as it stands, without creating anything: a file in
 * its place, a symbolic link to nothing (a dotfiles checkout moved away), a directory this user cannot
 * write. Undefined when it can be used, or is missing and will be made.
 */
export function homeProblem(
  home: string,
  env: NodeJS.ProcessEnv = process.env,
  passwd?: string,
): string | undefined {
  let found: Stats;
  try {
    found = statSync(home);
  } catch (err) {
    // A loop of links (ELOOP) is a link too: named as one, not as a directory that cannot be written.
    const code = (err as NodeJS.ErrnoException).code;
    // A directory on the way this user may not look into (EACCES of stat): named, not SVC_HOME as unwritable.
    const closed = code === "EACCES" ? closedProblem(home, homeFromUser(home, env), passwd) : undefined;
    if (closed !== undefined) return closed;
    if (code !== "ENOENT" && code !== "ELOOP" && code !== "ENOTDIR")
      return homeNotWritable(home, err, passwd).message;
    const to = linkTo(home);
    // A link of the system's (`/etc/modules-load.d/modules.conf`) is not this user's to point or make a target for.
    if (to !== undefined)
      return `${home}: SVC_HOME is ${to.said} — ${ownLink(home, passwd) ? `${to.fix}, or ` : ""}set SVC_HOME to another one`;
    // A loop, a link to nothing or a file on the way (`hl -> hl`, SVC_HOME=hl/.svc): no directory can be made there.
    const way = noDirectoryOnTheWay(home);
    const user = homeFromUser(home, env);
    if (way !== undefined) return noDirectoryProblem(home, way, user, passwd);
    // Missing: the gateway makes it, where it can.
    if (code === "ENOENT") return missingHomeProblem(home, user);
    // A loop undone since it was met: named without its link.
    if (code === "ELOOP")
      return `${home}: SVC_HOME is in ${LOOP_OF_LINKS}, on the way to it — point the link at a directory, or set SVC_HOME to another one`;
    return homeNotWritable(home, err, passwd).message;
  }
  if (!found.isDirectory()) {
    // Never svc's to move or remove (`SVC_HOME=/etc/passwd`, `/dev/null`): svc makes a directory, never a file.
    return `${home}: SVC_HOME is ${kindOf(found)}, not a directory — set SVC_HOME to a directory`;
  }
  try {
    accessSync(home, constants.W_OK);
  } catch (err) {
    const user = homeFromUser(home, env);
    const code = (err as NodeJS.ErrnoException).code;
    if (user !== undefined && (code === "EACCES" || code === "EPERM"))
      return closedHomeProblem(home, found, user);
    return homeNotWritable(home, err, passwd).message;
  }
  return undefined;
}

/**
 * Why `~/.svc`, there with SVC_HOME unset, cannot be svc's home: another user's (`sudo -u svc` keeping HOME=/home/me,
 * where `.svc` is me's, with its tokens, sessions and journal), named with its owner under HOME and no SVC_HOME as if
 * one were set, and never offered to be given away: only root's `.svc` in this user's own HOME (a root run's
 * leftover) is, with its `chown -R`; this user's own, closed to writing, is to be opened.
 */
function closedHomeProblem(
  home: string,
  found: Stats,
  user: { readonly name: string; readonly dir: string },
): string {
  const uid = process.getuid?.();
  const whose = found.uid === uid ? "" : ` (owned by uid ${found.uid})`;
  const said = `${user.name} is ${user.dir}, and ${home}${whose} cannot be written by ${thisUser()}, so svc has no home of its own`;
  if (found.uid === uid)
    return `${said}: make it writable (chmod u+rwx ${home}), or set SVC_HOME to a directory this user can write`;
  let homeOwner: number | undefined;
  try {
    homeOwner = statSync(user.dir).uid;
  } catch {}
  if (found.uid === 0 && homeOwner === uid)
    return `${said}: give it to this user (chown -R ${userName()} ${home}, as root: a root run's leftover), or set SVC_HOME to a directory this user can write`;
  return `${said}: set SVC_HOME to a directory this user can write`;
}

/**
 * Why SVC_HOME cannot be reached: a directory on the way to it this user may not look into (`closedOnTheWay`, every
 * link followed: `/srv/private`, root's with mode 0700, never a link to it), with its owner and the chmod that lets
 * this user through; with SVC_HOME unset, named as what stands in HOME's way (`sudo -u svc` keeping HOME=/root), with
 * no chmod of it. Undefined when no such directory is found.
 */
function closedProblem(
  home: string,
  user: { readonly name: string; readonly dir: string } | undefined,
  passwd?: string,
): string | undefined {
  const closed = closedDirectory(home, passwd);
  if (closed === undefined) return undefined;
  if (user !== undefined) {
    const at =
      closed.dir === user.dir
        ? `${closed.owner === undefined ? "" : ` (owned by uid ${closed.owner})`}, which`
        : `, and on the way to it ${closed.named}, which`;
    return `${user.name} is ${user.dir}${at} ${thisUser()} may not look into, so svc has no home of its own: set SVC_HOME to a directory this user can write`;
  }
  return `${home}: SVC_HOME cannot be reached: on the way to it, ${closed.named} cannot be looked into by ${thisUser()} — ${closedFix(closed, "set SVC_HOME to a directory this user can write", true)}`;
}

/**
 * Why a missing SVC_HOME cannot be made: the nearest directory above it that exists is one this user
 * may not create entries in (a container's read-only or root-owned /home, a systemd unit's HOME under
 * /var/lib owned by root). Undefined when it can be made. With SVC_HOME unset, a HOME that is not there
 * (`/nonexistent`, a service account's) is named as what leads there, and not to be made.
 */
function missingHomeProblem(
  home: string,
  user: { readonly name: string; readonly dir: string } | undefined,
): string | undefined {
  let parent = dirname(home);
  while (dirname(parent) !== parent && statSync(parent, { throwIfNoEntry: false }) === undefined)
    parent = dirname(parent);
  try {
    accessSync(parent, constants.W_OK | constants.X_OK);
    return undefined;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? describeError(err);
    // The nearest directory there is above HOME: HOME itself is not there.
    if (user !== undefined && parent !== user.dir)
      return `${user.name} is ${user.dir}, which does not exist, and this user (${userName()}) may not create directories in ${parent} (${code}), so svc has no home of its own: set SVC_HOME to a directory this user can write`;
    // HOME itself, there but not this user's to write in (HOME=/, systemd DynamicUser's; a /var/www of root's).
    if (user !== undefined)
      return `${user.name} is ${user.dir}, where this user (${userName()}) may not create directories (${code}), so svc has no home of its own: set SVC_HOME to a directory this user can write`;
    return `${home}: SVC_HOME does not exist and cannot be made: this user (${userName()}) may not create directories in ${parent} (${code}) — create it as a user who can and give it to this one (mkdir -p ${home} && chown ${userName()} ${home}), or set SVC_HOME to a directory this user can write`;
  }
}

/**
 * Why SVC_HOME has no room (the disk it is on has no block left that this user may take), found without
 * writing; undefined when it has some, or when that cannot be read. `svc config check`'s view of the full
 * disk the gateway's start finds by writing its pid file.
 */
export function homeFullProblem(home: string): string | undefined {
  let left: bigint | number;
  try {
    const found = statfsSync(home, { bigint: true });
    // root may take the blocks the file system keeps back from other users.
    left = process.getuid?.() === 0 ? found.bfree : found.bavail;
  } catch {
    return undefined;
  }
  if (left > 0) return undefined;
  return `${home}: the disk SVC_HOME is on is full (no space left for this user) — the gateway cannot write its pid file, log and state there (its start fails): free some space`;
}

/** The directories the gateway makes in SVC_HOME before it listens, and what it keeps in each. */
const GATEWAY_DIRS: readonly (readonly [name: string, holds: string])[] = [
  ["logs", "its log (gateway.log)"],
  ["state", "its journal of accepted runs"],
];

/**
 * The files the gateway writes in SVC_HOME: its pid and address, where `svc gateway stop|status` find it,
 * and its log, which a directory in its place would refuse with a bare EISDIR.
 */
const GATEWAY_FILES: readonly (readonly [name: string, holds: string])[] = [
  ["gateway.pid", "its pid"],
  ["gateway.json", "where it listens"],
  ["logs/gateway.log", "its log"],
];

/**
 * `path`'s stat, undefined when it is not there (ENOTDIR too: a link to a name below a file, `logs -> f1/x`), or
 * "loop" when it is in a loop of links (ELOOP).
 */
function statOrLoop(path: string): Stats | undefined | "loop" {
  try {
    return statSync(path, { throwIfNoEntry: false });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ELOOP") return "loop";
    if (code === "ENOTDIR") return undefined;
    throw err;
  }
}

/** Whether `path` is a symbolic link (false when it cannot be looked at). */
function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * Why the gateway could not make or use one of its directories in SVC_HOME (`logs`, `state`), found
 * without creating anything: a file in its place, a symbolic link to nothing, one this user cannot write;
 * or a directory where it writes `gateway.pid`, `gateway.json` or `logs/gateway.log`. Undefined when each can be used, or is
 * missing and will be made. `access` is the write check (a test's, for refusals only root could stage). One that is a
 * symbolic link this user cannot write through (`logs -> /var/log/svc`, root's) is said as the other data directories
 * are (`dataDirsProblem`, looking at `maxEntries` in each): named with where it leads, and whether that is svc's to give.
 */
export function gatewayDirProblem(
  home: string,
  access: (path: string, mode: number) => void = accessSync,
  maxEntries: number = Number.POSITIVE_INFINITY,
): string | undefined {
  for (const [name, holds] of GATEWAY_DIRS) {
    const dir = join(home, name);
    try {
      const found = statOrLoop(dir);
      if (found === undefined || found === "loop") {
        const to = linkTo(dir) ?? (found === "loop" ? INTO_A_LOOP : undefined);
        if (to === undefined) continue; // missing: the gateway makes it
        return `${dir}: ${to.said} — the gateway keeps ${holds} there: ${to.fix}, or remove the link (the gateway makes the directory)`;
      }
      if (!found.isDirectory()) {
        if (lstatSync(dir).isFile())
          return `${dir}: not a directory — the gateway keeps ${holds} there: move that file away (the gateway makes the directory)`;
        // A link to a device (`logs -> /dev/null`) or to a file, or a device itself: no file to move away.
        const { said, fix } = noDirectoryAt(dir);
        return `${said} — the gateway keeps ${holds} there: ${fix} (the gateway makes the directory)`;
      }
      access(dir, constants.W_OK | constants.X_OK);
    } catch (err) {
      const refused = (err as NodeJS.ErrnoException).code;
      if ((refused === "EACCES" || refused === "EPERM") && isLink(dir)) {
        const linked = dataDirsProblem(home, maxEntries);
        if (linked !== undefined) return linked;
      }
      return `${dir}: cannot be written (${describeError(err)}) — the gateway keeps ${holds} there: ${writeFix(err, "fix its owner or permissions")}`;
    }
  }
  // gateway.pid and gateway.json are written by renaming a new file over them, which a directory refuses.
  for (const [name, holds] of GATEWAY_FILES) {
    const file = join(home, name);
    let found: Stats | undefined;
    try {
      found = statSync(file, { throwIfNoEntry: false });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ELOOP") throw err;
      return `${file}: a symbolic link into ${LOOP_OF_LINKS} (ELOOP) — the gateway writes ${holds} in a file of this name: remove the link`;
    }
    if (found?.isDirectory())
      return `${file}: a directory — the gateway writes ${holds} in a file of this name: move that directory away`;
  }
  return undefined;
}

/**
 * The gateway writes gateway.pid, logs and stores in SVC_HOME: one it cannot write (read-only, another
 * user's) refuses the start before anything listens, instead of a bare EACCES once requests were taken.
 */
export function assertHomeWritable(home: string): void {
  const problem =
    homeProblem(home) ??
    gatewayDirProblem(home, accessSync, START_MAX_ENTRIES) ??
    dataDirsProblem(home, START_MAX_ENTRIES);
  if (problem !== undefined) throw new SvcError("startup_refused", problem);
  try {
    makeDirs(home);
    accessSync(home, constants.W_OK);
  } catch (err) {
    throw homeNotWritable(home, err);
  }
}
