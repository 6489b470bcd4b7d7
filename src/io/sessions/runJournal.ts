import { existsSync, readdirSync, readFileSync, statSync, unlinkSync, utimesSync } from "node:fs";
import { join } from "node:path";
import type { RunRecord } from "../../agent/runRecord.js";
import { type BatchedWriter, createBatchedFileWriter } from "../batchedWriter.js";
import { isoTime } from "../isoTime.js";
import { makeDirs } from "../makeDirs.js";
import { narrowMode } from "../privateMode.js";
import { runSessionKey, type SessionEntry } from "./store.js";

/** One webhook-started agent run: its own session `webhook:<route>:<delivery_id>`. */
export interface RunSession {
  readonly key: string;
  readonly route: string;
  readonly delivery_id: string;
  readonly at: string;
  readonly entries: readonly SessionEntry[];
  /** What a model run did (steps, tool calls, tokens, model, outcome); absent for echo and command runs. */
  readonly run?: RunRecord;
  /** Why a run without a model record failed (a `command` agent that exited non-zero, was killed, timed out). */
  readonly error?: string;
}

export interface RunToRecord {
  readonly route: string;
  readonly deliveryId: string;
  readonly prompt: string;
  readonly reply: string;
  readonly record?: RunRecord;
  /** The run failed and has no reply: its line holds the prompt alone and `error` (see `RunSession`). */
  readonly error?: string;
}

export interface RunJournal {
  /** Queues one line, written at the end of this event-loop turn; never throws (errors go to `onError`). */
  record(run: RunToRecord): void;
  /** Resolves once everything recorded so far is written and the file is closed. */
  close(): Promise<void>;
}

export const RUN_JOURNAL_DIR = "webhook-runs";

/**
 * One journal line, byte for byte what `JSON.stringify(session)` gives for a `RunSession` (every field
 * is a string, so each is escaped on its own): three times cheaper than stringifying the object.
 */
export function runSessionLine(
  route: string,
  deliveryId: string,
  at: string,
  prompt: string,
  reply: string,
  record?: RunRecord,
  error?: string,
): string {
  const q = JSON.stringify;
  const when = q(at);
  const asked = q(prompt);
  if (error !== undefined)
    return `{"key":${q(runSessionKey(route, deliveryId))},"route":${q(route)},"delivery_id":${q(deliveryId)},"at":${when},"entries":[{"role":"user","content":${asked},"at":${when}}],"error":${q(error)}}\n`;
  // An echo run's reply is the prompt itself: the same string escapes the same way.
  const answered = reply === prompt ? asked : q(reply);
  return `{"key":${q(runSessionKey(route, deliveryId))},"route":${q(route)},"delivery_id":${q(deliveryId)},"at":${when},"entries":[{"role":"user","content":${asked},"at":${when}},{"role":"assistant","content":${answered},"at":${when}}]${record === undefined ? "" : `,"run":${q(record)}`}}\n`;
}

/**
 * Run sessions go to a daily journal `sessions/webhook-runs/<YYYY-MM-DD>.jsonl`, one JSON line a run,
 * appended (O_APPEND, mode 0600): a burst of thousands of runs costs no lock and no index rewrite.
 * Lines recorded in the same turn of the event loop go out as one write at the end of that turn (and on
 * a change of day, on `close` and at process exit). Chat sessions (few, long-lived) keep the indexed store.
 */
export function createRunJournal(
  sessionsDir: string,
  onError: (err: unknown) => void,
  /** The gateway's clock: dates each line, names the day's file and judges which days have expired. */
  now: () => Date,
  /** Says a journal dated after today (see `removeExpiredDays`). */
  warn?: (message: string) => void,
): RunJournal {
  const dir = join(sessionsDir, RUN_JOURNAL_DIR);
  let day = "";
  let writer: BatchedWriter | undefined;
  /** The day's journal could not be opened (its directory cannot be made): reported once until it can. */
  let openFailing = false;
  const open = (today: string, at: Date) => {
    writer?.close();
    makeDirs(dir);
    narrowModes(sessionsDir, dir);
    removeExpiredDays(dir, at, warn);
    // A line cut short (a full disk, a crash mid-write) is ended first, at this opening and at each reopen
    // (the file put back after it was moved away), so the next run's line is not glued to it.
    writer = createBatchedFileWriter(join(dir, `${today}.jsonl`), 0o600, onError, { endTornLine: true });
    day = today;
    return writer;
  };
  /** ISO time of a run (see isoTime). */
  const isoOf = (date: Date) => isoTime(date.getTime());
  return {
    record(run) {
      try {
        const date = now();
        const at = isoOf(date);
        const today = at.slice(0, 10);
        const current = today !== day || writer === undefined ? open(today, date) : writer;
        openFailing = false;
        current.write(
          runSessionLine(run.route, run.deliveryId, at, run.prompt, run.reply, run.record, run.error),
        );
      } catch (err) {
        // Tried again at the next run; a busy gateway would otherwise report it once per run.
        if (!openFailing) onError(err);
        openFailing = true;
      }
    },
    close() {
      try {
        writer?.close();
      } catch (err) {
        onError(err);
      }
      writer = undefined;
      day = "";
      return Promise.resolve();
    },
  };
}

/**
 * Days of runs kept: a day's journal is removed once the day is more than this many days past, at the
 * first run recorded on a later day (once a day, and at a start). Every accepted event adds its prompt and
 * reply (up to `max_body_bytes` each), so without an end the directory would grow for as long as the gateway
 * runs, as fast as senders post. The same week the delivery history keeps.
 */
export const RUN_JOURNAL_RETENTION_DAYS = 7;

const DAY_FILE = /^(\d{4}-\d{2}-\d{2})\.jsonl$/;

/**
 * Removes the expired day journals of one profile's `sessions/` directory as of `now` (the gateway's clock),
 * without opening a journal: at a start, for every profile on disk, so a profile that gets no more runs
 * does not keep its prompts and replies past the retention.
 */
export function removeExpiredRunJournals(
  sessionsDir: string,
  now: Date,
  warn?: (message: string) => void,
): void {
  removeExpiredDays(join(sessionsDir, RUN_JOURNAL_DIR), now, warn);
}

const DAY_MS = 86_400_000;

/**
 * Removes the day journals in `dir` older than RUN_JOURNAL_RETENTION_DAYS before `now`'s day (UTC).
 * Best effort: one that cannot be removed now is tried again at the next day's first run, and the run
 * being recorded is never held up by it. A journal dated more than a day after today is `futureDay`'s.
 */
function removeExpiredDays(dir: string, now: Date, warn?: (message: string) => void): void {
  const today = now.toISOString().slice(0, 10);
  const oldestKept = new Date(Date.parse(today) - RUN_JOURNAL_RETENTION_DAYS * DAY_MS)
    .toISOString()
    .slice(0, 10);
  const latestPlausible = new Date(Date.parse(today) + DAY_MS).toISOString().slice(0, 10);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const day = DAY_FILE.exec(name)?.[1];
    if (day === undefined) continue;
    if (day > latestPlausible) {
      futureDay(join(dir, name), today, now, warn);
      continue;
    }
    if (day >= oldestKept) continue;
    try {
      unlinkSync(join(dir, name));
    } catch {
      // Left for the next day's first run.
    }
  }
}

/**
 * A journal named for a day more than one day after today: written while the clock was ahead, and set back
 * since. Its name says nothing of its age (kept until that date had passed, it could hold its prompts and
 * replies for years), so it is judged by its last change instead, removed once that is more than the
 * retention past. One last changed "in the future" as well is as undated: its modification time is set to
 * now the first time it is found, said once at WARN, so it is removed RUN_JOURNAL_RETENTION_DAYS later.
 */
function futureDay(path: string, today: string, now: Date, warn?: (message: string) => void): void {
  try {
    const changed = statSync(path).mtimeMs;
    if (changed > now.getTime() + DAY_MS) {
      utimesSync(path, now, now);
      warn?.(
        `[webhook] run journal ${path} is dated after today (${today} by the gateway's clock, which was ahead when it was written): kept ${RUN_JOURNAL_RETENTION_DAYS} days from now, then removed`,
      );
    } else if (now.getTime() - changed > RUN_JOURNAL_RETENTION_DAYS * DAY_MS) unlinkSync(path);
  } catch {
    // Gone meanwhile, or not ours to change: looked at again at the next day's first run.
  }
}

/**
 * The sessions directory and its run journal directory private (0700), and the day journals already there
 * (0600), also when they existed wider — left by an older svc or another umask, restored from a backup:
 * they hold every run's prompt and reply, payload text included. The 0700 `sessions/` keeps the chat
 * transcripts beside them private too. At each journal's opening: a start's first run, a day's first run.
 */
function narrowModes(sessionsDir: string, dir: string): void {
  narrowMode(sessionsDir, 0o700);
  narrowMode(dir, 0o700);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) if (DAY_FILE.test(name)) narrowMode(join(dir, name), 0o600);
}

/** Finds a run session by key (`webhook:<route>:<delivery_id>`), newest journal first. */
export function findRunSession(sessionsDir: string, key: string): RunSession | undefined {
  const dir = join(sessionsDir, RUN_JOURNAL_DIR);
  if (!existsSync(dir)) return undefined;
  const days = readdirSync(dir)
    .filter((name) => name.endsWith(".jsonl"))
    .sort()
    .reverse();
  for (const name of days) {
    const lines = readFileSync(join(dir, name), "utf8").split("\n");
    for (let i = lines.length - 1; i >= 0; i--) {
      const line = lines[i];
      if (!line) continue;
      try {
        const session = JSON.parse(line) as RunSession;
        if (session.key === key) return session;
      } catch {
        // A torn last line from a hard kill: skip it.
      }
    }
  }
  return undefined;
}
