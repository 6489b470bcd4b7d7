import { readdirSync, readlinkSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { makeDirs } from "./makeDirs.js";
import { processStartTime, processStat } from "./processAlive.js";

/** A scheduled cron run under way: which job, what started it, and when. */
export interface CronRunNote {
  readonly profile: string;
  readonly jobId: string;
  readonly trigger: string;
  /** When the run started (ms). */
  readonly startedAt: number;
  /**
   * The occurrence the run was started for, when the next start may catch it up (one due time of its
   * schedule not claimed from other instances): its due time, and the `next_run` written before the run.
   */
  readonly dueRun?: string;
  readonly advancedTo?: string;
  /**
   * With several instances (Redis): the due time this process claimed for the run, and the token its claim
   * holds, by which the next start gives back the claim of this process once it is gone.
   */
  readonly claimedDueAt?: string;
  readonly claimHolder?: string;
}

export interface CronRunNotes {
  /** Notes a run as under way; the function returned removes the note once the run has ended. */
  started(run: CronRunNote): () => void;
}

/**
 * Notes each scheduled cron run of this process in `dir` while it runs: such a run is not journaled (its job's
 * next_run moved on before it started), so a gateway killed in the middle of it (its agent, or its delivery's
 * retries) left no trace of it at all. The next start takes the notes of a process that is gone
 * (`takeCutOffRuns`) and records those runs as cut off. A note is a symbolic link whose target is its text,
 * made whole by one system call; its name (`<pid>-<n>`) is this process's own. No fsync: a machine that went
 * down cut the run short either way, and the note only serves to say so.
 */
export function cronRunNotes(dir: string): CronRunNotes {
  const owner = [process.pid, processStartTime(process.pid) ?? "-"] as const;
  let made = false;
  let count = 0;
  return {
    started(run) {
      const file = join(dir, `${process.pid}-${++count}`);
      for (let tries = 0; tries < 2; tries++) {
        try {
          if (!made) makeDirs(dir);
          made = true;
          rmSync(file, { force: true }); // a note of a process that had this pid before
          symlinkSync(JSON.stringify({ owner, ...run }), file);
          break;
        } catch (err) {
          // Only the record of a run a SIGKILL cuts short needs it: the run goes on without. A directory
          // removed since it was made (state/ deleted while the gateway ran) is made again, once.
          if ((err as NodeJS.ErrnoException).code !== "ENOENT") break;
          made = false;
        }
      }
      return () => rmSync(file, { force: true });
    },
  };
}

/**
 * The runs noted by a process that is gone (killed before they ended), each note removed; a note of a
 * process that still runs as the one that noted it (same pid and start time) is left alone.
 */
export function takeCutOffRuns(dir: string): CronRunNote[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const cutOff: CronRunNote[] = [];
  for (const name of names) {
    const file = join(dir, name);
    let note: unknown;
    try {
      note = JSON.parse(readlinkSync(file));
    } catch {
      rmSync(file, { force: true });
      continue;
    }
    const run = asNote(note);
    if (run === undefined) {
      rmSync(file, { force: true });
      continue;
    }
    const [pid, start] = run.owner;
    const stat = processStat(pid);
    if (stat !== undefined && stat.state !== "Z" && stat.startTime === start) continue;
    rmSync(file, { force: true });
    const { owner: _, ...noted } = run;
    cutOff.push(noted);
  }
  return cutOff.sort((a, b) => a.startedAt - b.startedAt);
}

function asNote(value: unknown): (CronRunNote & { owner: readonly [number, string] }) | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { owner, profile, jobId, trigger, startedAt, dueRun, advancedTo, claimedDueAt, claimHolder } =
    value as Record<string, unknown>;
  if (!Array.isArray(owner) || typeof owner[0] !== "number" || typeof owner[1] !== "string") return undefined;
  if (typeof profile !== "string" || typeof jobId !== "string" || typeof trigger !== "string")
    return undefined;
  if (typeof startedAt !== "number") return undefined;
  const occurrence =
    typeof dueRun === "string" && typeof advancedTo === "string" ? { dueRun, advancedTo } : {};
  // A claimed due time is kept with its holder or not at all (then not caught up: `recordCutOffRuns`).
  const claim =
    typeof claimedDueAt !== "string"
      ? {}
      : typeof claimHolder === "string"
        ? { claimedDueAt, claimHolder }
        : { claimedDueAt };
  return { owner: [owner[0], owner[1]], profile, jobId, trigger, startedAt, ...occurrence, ...claim };
}
