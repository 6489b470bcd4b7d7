import { lstatSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { svcHome } from "../config/paths.js";
import { INTO_A_LOOP, linkTo } from "./linkTo.js";
import { pathWithin } from "./pathWithin.js";
import { otherKind } from "./regularFile.js";

/** noDirectoryAt's fix for a plain file in a directory's place. */
export const MOVE_FILE_AWAY = "move that file away";

/** noDirectoryAt's fix for SVC_HOME itself, or a name on the way to it, in a directory's place. */
export const SET_SVC_HOME = "set SVC_HOME to a directory";

/**
 * Whether `at` is SVC_HOME itself (as this process takes it: SVC_HOME, or `~/.svc`) or a name on the way to it
 * (`/etc/passwd` for `SVC_HOME=/etc/passwd/x`): never svc's, whatever stands there (`SVC_HOME=/dev/null`), and
 * so never to be moved or removed. False when SVC_HOME cannot be found.
 */
export function homeOrOnTheWay(at: string): boolean {
  let home: string;
  try {
    home = resolve(svcHome());
  } catch {
    return false;
  }
  const dir = resolve(at);
  return pathWithin(home, dir);
}

/**
 * What stands at `at` where a directory goes, as a message names it, and what to do about it: a file, to move
 * away; a symbolic link to something no directory (`logs -> /dev/null`, to drop the log), whose link is what to
 * change, the device being the system's; a symbolic link to nothing or into a loop of links, whose target is to be
 * made or the link changed; a device, named pipe or socket itself, which is no file to move. SVC_HOME itself, or a
 * name on the way to it (`SVC_HOME=/dev/null`, `SVC_HOME=/etc/passwd`), is never svc's to move or remove: SVC_HOME
 * is what to change (`home`).
 */
export function noDirectoryAt(at: string): {
  readonly said: string;
  readonly fix: string;
  readonly home?: true;
} {
  let link = false;
  let what = "a file";
  try {
    link = lstatSync(at).isSymbolicLink();
    what = otherKind(statSync(at)) ?? "a file";
  } catch {
    // gone meanwhile: said as a file, as before
  }
  // A link to nothing, or into a loop of links, as the start names it: its target, and to make it or change the link.
  const nowhere = link ? leadsNowhere(at) : undefined;
  // SVC_HOME itself a link to nothing (or one on the way to it): said by SVC_HOME's problem, which says whether the
  // link is this user's to change.
  if (nowhere !== undefined && homeOrOnTheWay(at))
    return { said: nowhere.said, fix: SET_SVC_HOME, home: true };
  if (nowhere !== undefined) return nowhere;
  if (link) {
    let target: string;
    try {
      target = realpathSync(at);
    } catch {
      target = readlinkSync(at);
    }
    const said = `${at} is a symbolic link to ${target}, which is ${what}, not a directory`;
    if (homeOrOnTheWay(at)) return { said, fix: SET_SVC_HOME, home: true };
    return { said, fix: "point the link at a directory, or remove the link" };
  }
  if (homeOrOnTheWay(at)) return { said: `${at} is ${what}, not a directory`, fix: SET_SVC_HOME, home: true };
  if (what !== "a file") return { said: `${at} is ${what}, not a directory`, fix: "remove it" };
  return { said: `${at} is a file, not a directory`, fix: MOVE_FILE_AWAY };
}

/**
 * The link `at` when it leads nowhere (its target not there, or a loop of links: ELOOP), as the start's check says it
 * (`a symbolic link to <target>, which does not exist`), with the link to change besides; undefined when it leads to
 * something.
 */
function leadsNowhere(at: string): { readonly said: string; readonly fix: string } | undefined {
  try {
    statSync(at);
    return undefined;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== "ENOENT" && code !== "ELOOP" && code !== "ENOTDIR") return undefined;
  }
  const to = linkTo(at) ?? INTO_A_LOOP;
  return { said: `${at} is ${to.said}`, fix: `${to.fix}, or remove the link` };
}
