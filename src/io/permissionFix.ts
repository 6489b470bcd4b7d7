import { statSync } from "node:fs";
import { resolve } from "node:path";
import { homeFromUser, svcHome } from "../config/paths.js";
import { type ClosedDir, closedDirectory, closedFix } from "./closedDir.js";
import { isSvcOwnDir } from "./dataDirsWritable.js";
import { pathWithin } from "./pathWithin.js";
import { thisUser, userName } from "./userName.js";

/**
 * What to do about a file this process may not read (`EACCES`, `EPERM`: another user's file, such as one a
 * `sudo svc …` command created, or one whose mode leaves its owner out), or undefined for any other error. A file
 * behind a directory this user may not look into is named with that directory and what lets this user in: the
 * chmod that lets it look into another user's directory elsewhere, or, for another user's directory of svc's own
 * (SVC_HOME, one in it, a profile's directory: `cron/` left by `sudo svc cron create`), the `chown -R` that gives it
 * to this user, since its files are as closed as it is. Never for a `~/.svc` taken from HOME that is another user's
 * (`sudo -u svc` keeping HOME=/home/me), nor root's in another user's HOME: that one's tokens, sessions and journal
 * are not this user's to take, and SVC_HOME is to be set instead. Nor ever for one of the system's own directories
 * or another user's home (`notToOpen`: SVC_HOME=/root, SVC_HOME=/etc/ssl/private/svc), svc's own though it is as
 * SVC_HOME: only SVC_HOME is to be set, and a link to be pointed elsewhere when the way to the file went through one.
 * `closedOnTheWay`: how the closed directory is found (a test's).
 */
export function permissionFix(
  file: string,
  err: unknown,
  closedOnTheWay: (file: string) => ClosedDir | undefined = closedDirectory,
): string | undefined {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code !== "EACCES" && code !== "EPERM") return undefined;
  // Refused by a directory on the way (a profile linked into a checkout of root's with mode 0700): the file may not
  // even be there, and no chown or chmod of it would let this user through.
  const closed = code === "EACCES" ? closedOnTheWay(file) : undefined;
  if (closed !== undefined) {
    const own = closed.notToOpen === undefined && closed.owner !== undefined && svcOwnDir(closed.dir);
    const instead = "set SVC_HOME to a directory this user can write";
    const fix = !own
      ? closedFix(
          closed,
          throughLink(file, closed.dir) ? `${instead}, or point the link into it elsewhere` : instead,
        )
      : anotherUsersHome()
        ? "it is another user's, not this user's to take: set SVC_HOME to a directory this user can write"
        : `give it to this user: chown -R ${userName()} ${closed.dir} (as root)`;
    return `on the way to it, ${closed.named} cannot be looked into by ${thisUser()}: ${fix}`;
  }
  return `make it readable by the user svc runs as (uid ${process.getuid?.() ?? "?"}): give it to that user (chown) and chmod 600 ${file}`;
}

/**
 * Whether the way to `file` went through a symbolic link to reach `closed` (found with every link followed): `file`
 * is not below `closed` as it is written (`profiles/p -> /srv/private/p`), so there is a link to point elsewhere.
 */
function throughLink(file: string, closed: string): boolean {
  return !pathWithin(resolve(file), closed);
}

/** Whether `dir` is svc's own (`isSvcOwnDir`) in the SVC_HOME this process uses; false when it has none. */
function svcOwnDir(dir: string): boolean {
  try {
    return isSvcOwnDir(dir, svcHome());
  } catch {
    return false;
  }
}

/**
 * Whether the SVC_HOME this process uses is `~/.svc` from HOME (SVC_HOME unset) and another user's than this one's,
 * or cannot be looked at to tell: as the start says it (`closedHomeProblem`), root's `.svc` is this user's to take
 * only in a HOME of this user's own (a root run's leftover), not in another's (`sudo` keeping HOME=/home/me).
 */
function anotherUsersHome(): boolean {
  try {
    const home = svcHome();
    const user = homeFromUser(home);
    if (user === undefined) return false;
    const uid = process.getuid?.();
    const owner = statSync(home).uid;
    if (owner === uid) return false;
    return owner !== 0 || statSync(user.dir).uid !== uid;
  } catch {
    return true;
  }
}
