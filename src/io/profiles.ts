import { type Dirent, lstatSync, readdirSync, statSync } from "node:fs";
import { isAbsolute, join, resolve, sep } from "node:path";
import { expandHome } from "../config/interpolate.js";
import { nearMiss } from "../config/nearMiss.js";
import { DEFAULT_PROFILE, PROFILE_NAME, profilesAmong } from "../config/paths.js";
import { closedDirectory, closedFix } from "./closedDir.js";
import { byWayOf, LOOP_OF_LINKS, linkChainSync } from "./linkChain.js";
import { openFilesFix } from "./openFiles.js";
import { thisUser } from "./userName.js";

/**
 * A directory entry that is a profile's directory: a directory, or a symbolic link to one (a profile kept
 * elsewhere, such as in a dotfiles checkout: svc reads and writes its files through the link). A link into a
 * directory this user may not look into (EACCES) is one too: its target may well be there, and the directory that
 * keeps this user out is named (`dataDirsProblem`, `unusableProfileEntries`), not a link to nothing.
 */
export function isProfileDir(dir: string, entry: Dirent): boolean {
  if (entry.isDirectory()) return true;
  if (!entry.isSymbolicLink()) return false;
  try {
    return statSync(join(dir, entry.name)).isDirectory();
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EACCES"; // else a link to nothing
  }
}

/**
 * Whether `entry` is a profile's directory svc can get to: one (`isProfileDir`) that is no symbolic link into a
 * directory this user may not look into. Such a link is a profile all the same (`existingProfiles`), but its runs,
 * cron jobs and MCP logins cannot use it: `unusableProfileEntries` names it with the directory that keeps this user
 * out, as a link to nothing is named.
 */
function reachableProfileDir(dir: string, entry: Dirent): boolean {
  if (!entry.isSymbolicLink()) return isProfileDir(dir, entry);
  try {
    return statSync(join(dir, entry.name)).isDirectory();
  } catch {
    return false;
  }
}

/** What the gateway's cron scheduler logs, and `svc config check` warns, when `<home>/profiles` cannot be listed. */
export function profilesNotListed(err: unknown): string {
  const fix = openFilesFix(err);
  return `cannot list the profiles (${(err as Error).message}); running the default profile's jobs only${fix === undefined ? "" : ` — ${fix}`}`;
}

/**
 * The profiles that exist on disk: `default` (always), then each directory (or link to one) under
 * `<home>/profiles/` whose name is a valid profile name. A missing `profiles/` means only the default profile.
 */
export function existingProfiles(home: string): string[] {
  const dir = join(home, "profiles");
  let names: string[];
  try {
    names = readdirSync(dir, { withFileTypes: true })
      .filter((entry) => isProfileDir(dir, entry))
      .map((entry) => entry.name);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    names = [];
  }
  return profilesAmong(names);
}

/**
 * Entries under `<home>/profiles/` named as a profile that cannot be one: a symbolic link to nothing (a
 * dotfiles checkout that moved) or into a directory this user may not look into (named with that directory), or a file; or `profiles` itself, when it is one of those. Every run, cron job and MCP login of that profile fails to write
 * its files there (a raw ENOENT / ENOTDIR), and its cron jobs are never scheduled: named at start, on each
 * reload and by `svc config check`.
 */
export function unusableProfileEntries(home: string): string[] {
  const dir = join(home, "profiles");
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    const whole = unusableProfilesDir(dir, undefined, err);
    return whole === undefined ? [] : [whole];
  }
  return entries
    .filter((entry) => entry.name !== DEFAULT_PROFILE && PROFILE_NAME.test(entry.name))
    .filter((entry) => !reachableProfileDir(dir, entry))
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .map((entry) => unusableEntryMessage(dir, entry));
}

/**
 * Why `profile`'s entry under `<home>/profiles/` cannot be its directory (a link to nothing, a file), in
 * the words of `unusableProfileEntries`, or why `profiles/` itself cannot hold it (a file, a link to
 * nothing); undefined for the default profile, a directory (or a link to one) and a name with no entry yet. A command that writes a profile's files (`svc cron create`) refuses
 * with it: writing through a link to nothing makes the directory it pointed to, somewhere else.
 */
export function unusableProfileEntry(home: string, profile: string | undefined): string | undefined {
  if (profile === undefined || profile === DEFAULT_PROFILE) return undefined;
  const dir = join(home, "profiles");
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    return unusableProfilesDir(dir, profile, err);
  }
  const entry = entries.find((candidate) => candidate.name === profile);
  if (entry === undefined || reachableProfileDir(dir, entry)) return undefined;
  return unusableEntryMessage(dir, entry);
}

/**
 * Why `<home>/profiles` itself, which `readdir` refused with `err`, cannot hold `profile`'s directory (any
 * named profile's, without one): a file
 * there (ENOTDIR) or a symbolic link to nothing (ENOENT on a link). Undefined when there is simply no
 * `profiles/` yet, or for another error (left to the write that meets it).
 */
function unusableProfilesDir(dir: string, profile: string | undefined, err: unknown): string | undefined {
  const code = (err as NodeJS.ErrnoException).code;
  const cannot = `${profile === undefined ? "the named profiles'" : `profile ${profile}'s`} runs, cron jobs and MCP logins cannot use it (every named profile's directory is under it)`;
  if (code !== "ENOTDIR" && code !== "ENOENT") return undefined;
  let link = false;
  try {
    link = lstatSync(dir).isSymbolicLink();
  } catch {
    // not there at all (ENOENT), or a file further up (ENOTDIR)
  }
  if (!link)
    return code === "ENOTDIR" ? `${dir} is not a directory — ${cannot}: move the file away` : undefined;
  const { said, fix } = linkToNoDirectory(dir);
  return `${said} — ${cannot}: ${fix}, or remove the link`;
}

/**
 * Why `dir`, a directory svc keeps `what` in (`the default profile's cron jobs`), cannot be it: a symbolic link to
 * nothing (or to a file), or a file in its place, in the words of `unusableProfileEntry`; or a link into a directory
 * this user may not look into, named with that directory. Read through such a link, what it holds reads as nothing; a
 * write fails with a raw ENOENT (EACCES) of `mkdir`. Undefined for a directory, a link to one, or nothing there yet
 * (svc makes the directory).
 */
export function unusableDir(dir: string, what: string): string | undefined {
  let found: ReturnType<typeof lstatSync>;
  try {
    found = lstatSync(dir, { throwIfNoEntry: false });
  } catch {
    return undefined; // a file further up (ENOTDIR), or one this user may not look into: said by what reads it
  }
  if (found === undefined || found.isDirectory()) return undefined;
  if (!found.isSymbolicLink())
    return `${dir} is not a directory — ${what} cannot be kept there: move the file away (svc makes the directory)`;
  try {
    if (statSync(dir).isDirectory()) return undefined;
  } catch {
    // a link to nothing
  }
  const { said, fix } = linkToNoDirectory(dir);
  return `${said} — ${what} cannot be kept there: ${fix}, or remove the link (svc makes the directory)`;
}

function unusableEntryMessage(dir: string, entry: Dirent): string {
  const path = join(dir, entry.name);
  if (entry.isSymbolicLink()) {
    const { said, fix } = linkToNoDirectory(path);
    return `${said} — profile ${entry.name}'s runs, cron jobs and MCP logins cannot use it: ${fix}, or remove the link`;
  }
  return `${path} is not a directory — profile ${entry.name}'s runs, cron jobs and MCP logins cannot use it: move the file away (a profile is the directory ${path}/)`;
}

/**
 * A symbolic link `path` that leads to no directory: where it leads in the end (every link on the way followed,
 * and named after it) and what is there, and what to do short of removing the link. One into a directory this user
 * may not look into (its target may well be there) names that directory and the chmod that lets this user through.
 */
function linkToNoDirectory(path: string): { readonly said: string; readonly fix: string } {
  const pointAt = "point the link at a directory";
  const chain = linkChainSync(path);
  if (chain === undefined) return { said: `${path}: a symbolic link into ${LOOP_OF_LINKS}`, fix: pointAt };
  const target = chain.at(-1);
  if (target === undefined)
    return {
      said: `${path}: a symbolic link to (unreadable), which is not a directory (missing or moved)`,
      fix: "restore the directory it points to",
    };
  const to = `${path}: a symbolic link to ${target}${byWayOf(chain)}`;
  let found: ReturnType<typeof lstatSync> | undefined;
  try {
    found = lstatSync(target, { throwIfNoEntry: false });
  } catch (err) {
    const closed = (err as NodeJS.ErrnoException).code === "EACCES" ? closedDirectory(target) : undefined;
    if (closed !== undefined)
      return {
        said: `${to}, which ${thisUser()} cannot get to: ${closed.named} cannot be looked into by this user`,
        fix: closedFix(closed, pointAt),
      };
    found = undefined; // a file further up (ENOTDIR): not there
  }
  if (found?.isFile() === true) return { said: `${to}, which is a file, not a directory`, fix: pointAt };
  if (found !== undefined && !found.isDirectory())
    return { said: `${to}, which is not a directory`, fix: pointAt };
  return {
    said: `${to}, which is not a directory (missing or moved)`,
    fix: "restore the directory it points to",
  };
}

/** `existingProfiles` for a warning: an unreadable `profiles/` counts as the default profile only. */
export function profilesOnDisk(home: string): string[] {
  try {
    return existingProfiles(home);
  } catch {
    return [DEFAULT_PROFILE];
  }
}

/**
 * The profile a `--profile` name with no directory yet is one or two letters from (`wrok` for `work`): a
 * typo, most likely. Undefined for the default profile, one on disk, or any other new name (a profile
 * needs its directory only for the files it holds, so a new name is taken as it is).
 */
export function newProfileTypo(home: string, profile: string | undefined): string | undefined {
  if (profile === undefined || profile === DEFAULT_PROFILE) return undefined;
  const profiles = profilesOnDisk(home);
  return profiles.includes(profile) ? undefined : nearMiss(profile, profiles);
}

/**
 * A path a user wrote in a route (`in_file`, `script`): `~/.svc` and `~/.svc/...` name the active
 * profile's root, as the spec writes the data directory (so they follow `$SVC_HOME` and profiles);
 * any other `~/...` is the user's home; an absolute path stays; a relative one resolves under `base`.
 */
export function resolveProfilePath(path: string, profileRoot: string, base: string = profileRoot): string {
  return resolve(profilePathAsWritten(path, profileRoot, base));
}

/**
 * `resolveProfilePath` before its `..` are collapsed by their text (absolute, `~` expanded): what the system
 * opens, where a `..` after a name that is a symbolic link goes up from where that link leads.
 */
export function profilePathAsWritten(path: string, profileRoot: string, base: string = profileRoot): string {
  if (path === "~/.svc" || path === "~/.svc/") return resolve(profileRoot);
  if (path.startsWith("~/.svc/")) return `${resolve(profileRoot)}${sep}${path.slice("~/.svc/".length)}`;
  const expanded = expandHome(path);
  return isAbsolute(expanded) ? expanded : `${resolve(base)}${sep}${expanded}`;
}
