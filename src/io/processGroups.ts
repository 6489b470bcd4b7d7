import { readdirSync, readFileSync, readlinkSync, renameSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { makeDirs } from "./makeDirs.js";
import { processAlive, processStartTime, processStat } from "./processAlive.js";

/** Where a process's agents (and the gateway's route scripts) are noted while they run. */
export interface ProcessGroups {
  /**
   * `notRunAgain`: the run's name (`cron:<job>` of a scheduled or manual cron run, `script:<route>` of a
   * route script) when its run is not journaled, so a next start that stops the group says that run is
   * not run again; `profile`, the named profile it is of (a cron job's), noted with it.
   */
  started(pid: number, notRunAgain?: string, profile?: string): void;
  ended(pid: number): void;
}

/** The state backend whose store holds the runs a process's agents run (`state.backend`). */
export type RunsBackend = "local" | "redis";

/** The last word of a journaled run's note: the backend its run is kept in (`run:local`, `run:redis`). */
const RUN_LABEL = /^run:(local|redis)$/;

/**
 * A process still running as the one noted (its pid with the same start time, not a zombie waiting to be
 * collected); unknown times never match.
 */
function runsAs(pid: number, start: string | undefined): boolean {
  if (!Number.isInteger(pid) || pid <= 1 || start === undefined || start === "-") return false;
  const stat = processStat(pid);
  return stat !== undefined && stat.state !== "Z" && stat.startTime === start;
}

/** Where a note is written before it is renamed to its group's name: `.<pgid>.tmp`. */
const notePath = (dir: string, pgid: number) => join(dir, `.${pgid}.tmp`);
const TEMP_NOTE = /^\.(\d+)\.tmp$/;

/**
 * Notes each agent process group this process leads in `dir`, one note per group (`<pgid>`: the leader's
 * start time, then this process's pid and start time, then the run's name when it is not journaled, else
 * `run:<backend>` when `backend` is given), removed when the group is stopped. A gateway
 * killed with SIGKILL cannot stop its agents; the next start stops what it left (`stopOrphanGroups`).
 * A note is a symbolic link whose target is its text: made whole by one system call, where a file is
 * created empty and written after, so a gateway killed between the two left an empty note that named no
 * owner and no start time, and the next start left its agent running. It is made under a temporary name
 * and renamed over a stale note of a reused pid. No fsync: the note only serves while the machine runs (a
 * machine that went down took the group with it).
 */
export function processGroupFiles(dir: string, backend?: RunsBackend): ProcessGroups {
  const owner = `${process.pid} ${processStartTime(process.pid) ?? "-"}`;
  let made = false;
  return {
    started(pid, notRunAgain, profile) {
      for (let tries = 0; tries < 2; tries++) {
        try {
          if (!made) makeDirs(dir);
          made = true;
          const label =
            notRunAgain !== undefined
              ? ` ${notRunAgain}${profile === undefined ? "" : ` ${PROFILE_FIELD}${profile}`}`
              : backend !== undefined
                ? ` run:${backend}`
                : "";
          const temp = notePath(dir, pid);
          rmSync(temp, { force: true });
          symlinkSync(`${processStartTime(pid) ?? "-"} ${owner}${label}`, temp);
          renameSync(temp, join(dir, String(pid)));
          return;
        } catch (err) {
          // Only the clean-up after a SIGKILL needs it: the run goes on without. A directory removed since it
          // was made (state/ deleted while the gateway ran) is made again, once.
          if ((err as NodeJS.ErrnoException).code !== "ENOENT") return;
          made = false;
        }
      }
    },
    ended(pid) {
      try {
        rmSync(join(dir, String(pid)), { force: true });
        rmSync(notePath(dir, pid), { force: true });
      } catch {
        // A note left behind names a group that is gone: the next start finds no such process.
      }
    },
  };
}

/**
 * The field after a run's name that names its profile (`cron:nightly profile=work`); a note without it (the
 * default profile's, or one an earlier version wrote) is of the default profile.
 */
const PROFILE_FIELD = "profile=";

/** A note's text: its link's target, or the text of a file (a note an earlier version of svc wrote). */
function readNote(file: string): string {
  try {
    return readlinkSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EINVAL") throw err;
    return readFileSync(file, "utf8");
  }
}

/**
 * Stops (SIGKILL to the whole group) the agents a process that is gone left running: their runs were not
 * recorded finished and run again now, so the old copy must not go on beside the new one. A group whose
 * noting process still runs (another `svc` command) is left alone; so is one whose leader is not the
 * process noted (its pid reused). Returns how many were stopped; `onNotRunAgain` is told the name (and
 * named profile, when noted) of each stopped group whose run is not journaled (a scheduled cron run: it does not run again). A whole note still
 * under its temporary name (the gateway was killed between writing and renaming it) counts as well.
 */
export function stopOrphanGroups(
  dir: string,
  onNotRunAgain?: (name: string, profile: string | undefined) => void,
  /**
   * Told the noting gateway (`<pid> <start time>`) of each group stopped whose run is journaled, and the
   * backend its note says the run is kept in (undefined in a note of an older svc, which did not say).
   */
  onStopped?: (owner: string, backend: RunsBackend | undefined) => void,
): number {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  let stopped = 0;
  for (const name of names) {
    const file = join(dir, name);
    let noted: string[];
    try {
      noted = readNote(file).trim().split(" ");
    } catch {
      continue;
    }
    const [start, ownerPid, ownerStart, label, ...more] = noted;
    const backend = RUN_LABEL.exec(label ?? "")?.[1] as RunsBackend | undefined;
    const notRunAgain = backend === undefined ? label : undefined;
    const profile = more.find((field) => field.startsWith(PROFILE_FIELD))?.slice(PROFILE_FIELD.length);
    // Part of a note: one another svc command is writing under its temporary name right now (a note under
    // its group's name is always whole; a part of one there can only be forgotten).
    if (ownerStart === undefined) {
      if (!TEMP_NOTE.test(name)) rmSync(file, { force: true });
      continue;
    }
    if (runsAs(Number(ownerPid), ownerStart) || (ownerStart === "-" && processAlive(Number(ownerPid))))
      continue;
    const pgid = Number(TEMP_NOTE.exec(name)?.[1] ?? name);
    if (runsAs(pgid, start)) {
      try {
        process.kill(-pgid, "SIGKILL");
        stopped += 1;
        if (notRunAgain !== undefined) onNotRunAgain?.(notRunAgain, profile);
        else onStopped?.(`${ownerPid} ${ownerStart}`, backend);
      } catch {
        // Gone meanwhile.
      }
    }
    rmSync(file, { force: true });
  }
  return stopped;
}
