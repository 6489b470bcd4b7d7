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
  /**
   * A tool's process group (`mcp:<server>`, a stdio MCP server; `tool:terminal`, a `terminal` command): no
   * run of its own, stopped by a next start all the same, so it does not go on beside the rerun of its run.
   */
  toolStarted(pid: number, tool: string, profile?: string): void;
  ended(pid: number): void;
}

/** One process group's note: made when its leader starts, removed when it has ended. */
export interface GroupNote {
  started(pid: number): void;
  ended(pid: number): void;
}

/** The note of a tool's process groups (`ProcessGroups.toolStarted`). */
export function toolGroupNote(groups: ProcessGroups, tool: string, profile?: string): GroupNote {
  return {
    started: (pid) => groups.toolStarted(pid, tool, profile),
    ended: (pid) => groups.ended(pid),
  };
}

/** The names a tool's note starts with: a stdio MCP server (`mcp:<server>`), a built-in tool (`tool:<name>`). */
const TOOL_LABEL = /^(mcp|tool):/;

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
  const note = (pid: number, label: string) => {
    for (let tries = 0; tries < 2; tries++) {
      try {
        if (!made) makeDirs(dir);
        made = true;
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
  };
  return {
    started(pid, notRunAgain, profile) {
      const label =
        notRunAgain !== undefined
          ? ` ${notRunAgain}${profileField(profile)}`
          : backend !== undefined
            ? ` run:${backend}`
            : "";
      note(pid, label);
    },
    toolStarted(pid, tool, profile) {
      // A server's name may hold spaces, which separate a note's fields.
      const [kind, ...name] = tool.split(":");
      note(pid, ` ${kind}:${encodeURIComponent(name.join(":"))}${profileField(profile)}`);
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

const profileField = (profile: string | undefined) =>
  profile === undefined ? "" : ` ${PROFILE_FIELD}${profile}`;

/** A tool's name as `toolStarted` was given it. */
function decodedTool(label: string): string {
  try {
    return decodeURIComponent(label);
  } catch {
    return label;
  }
}

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
 * Stops (SIGKILL to the whole group) the agents (and tools' processes: stdio MCP servers, `terminal`
 * commands) a process that is gone left running: their runs were not
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
  /** Told the tool (`mcp:<server>`, `tool:terminal`) and named profile of each tool's group stopped. */
  onTool?: (tool: string, profile: string | undefined) => void,
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
    const tool = label !== undefined && TOOL_LABEL.test(label) ? label : undefined;
    const notRunAgain = backend === undefined && tool === undefined ? label : undefined;
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
        if (tool !== undefined) onTool?.(decodedTool(tool), profile);
        else if (notRunAgain !== undefined) onNotRunAgain?.(notRunAgain, profile);
        else onStopped?.(`${ownerPid} ${ownerStart}`, backend);
      } catch {
        // Gone meanwhile.
      }
    }
    rmSync(file, { force: true });
  }
  return stopped;
}
