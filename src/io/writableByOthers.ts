import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { svcPaths } from "../config/paths.js";
import { profilesOnDisk } from "./profiles.js";

/** How deep, and how many entries of, a scripts or skills directory are looked at (a start stays quick). */
const MAX_DEPTH = 8;
const MAX_ENTRIES = 2000;

/** What another user could do with one of these places, as the warning says it. */
type Place = "home" | "config" | "env" | "subscriptions" | "cron" | "scripts" | "skills";

const CONSEQUENCE: Readonly<Record<Place, string>> = {
  home: "can replace config.yaml, .env and the other files in it, and so change what the gateway runs",
  config: "can add routes, agent commands and MCP server commands that the gateway runs as this user",
  env: "can change the secrets and variables the gateway reads",
  subscriptions: "can add routes with secrets of their own",
  cron: "can add jobs that the gateway runs",
  scripts: "can change what the route scripts run as this user",
  skills: "can change the instructions agent runs are given",
};

/** The mode bits of `path` (links followed, as svc reads and runs what they lead to); undefined when absent. */
function modeOf(path: string): { mode: number; directory: boolean } | undefined {
  try {
    const stat = statSync(path);
    return { mode: stat.mode & 0o7777, directory: stat.isDirectory() };
  } catch {
    return undefined;
  }
}

function warning(path: string, mode: number, directory: boolean, place: Place): string {
  const octal = (mode & 0o777).toString(8).padStart(4, "0");
  const what = directory ? "is a directory other users may write to" : "is writable by other users";
  return `${path} ${what} (mode ${octal}): any user of this machine ${CONSEQUENCE[place]} — chmod o-w ${path}`;
}

/** One place: named when others may write it. */
function checkOne(path: string, place: Place, out: string[]): void {
  const found = modeOf(path);
  if (found !== undefined && (found.mode & 0o002) !== 0)
    out.push(warning(path, found.mode, found.directory, place));
}

/** A directory and what is under it (scripts, skills): any part of it others may write. */
function checkTree(dir: string, place: Place, out: string[]): void {
  let seen = 0;
  const walk = (path: string, depth: number) => {
    const found = modeOf(path);
    if (found === undefined) return;
    if ((found.mode & 0o002) !== 0) out.push(warning(path, found.mode, found.directory, place));
    if (!found.directory || depth >= MAX_DEPTH) return;
    let names: string[];
    try {
      names = readdirSync(path).sort();
    } catch {
      return; // not listable: svc cannot run what is in it either
    }
    for (const name of names) {
      if (++seen > MAX_ENTRIES) return;
      walk(join(path, name), depth + 1);
    }
  };
  walk(dir, 0);
}

/**
 * The places under `$SVC_HOME` that decide what the gateway runs, as this user, and with which secrets —
 * the data directory and each profile's, `config.yaml`, every `.env`, the subscription store, cron jobs,
 * and the scripts and skills directories with what is in them — that other users of the machine may write
 * (mode `o+w`, as `umask 000` or a `chmod 777` leaves them). Such a place lets any local user run commands
 * as the gateway's user, so each is named at start, on reload and by `svc config check`, with the command
 * that fixes it. A group-writable file is left alone: a group sharing the configuration is a choice.
 */
export function placesWritableByOthers(home: string): string[] {
  const out: string[] = [];
  checkOne(home, "home", out);
  checkOne(svcPaths(home).config, "config", out);
  checkOne(svcPaths(home).subscriptions, "subscriptions", out);
  for (const profile of profilesOnDisk(home)) {
    const paths = svcPaths(home, profile);
    if (paths.root !== home) checkOne(paths.root, "home", out);
    checkOne(paths.env, "env", out);
    checkOne(paths.cronJobs, "cron", out);
    checkTree(paths.scripts, "scripts", out);
    checkTree(paths.skills, "skills", out);
  }
  return out;
}
