import {
  closeSync,
  fdatasyncSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { decodeRecords, type TornTail } from "./records.js";

/** Segment files: `journal-000001.seg`, numbered in the order they were started. */
const SEGMENT = /^journal-(\d{6,})\.seg$/;

export const segmentName = (n: number): string => `journal-${String(n).padStart(6, "0")}.seg`;

/** A segment being built by a rotation; renamed to its segment name once whole and durable. */
export const tempSegmentName = (n: number): string => `${segmentName(n)}.tmp`;
const TEMP_SEGMENT = /^journal-\d{6,}\.seg\.tmp$/;

/** The first and last record of a snapshot; a snapshot without its end was torn and is not used. */
export const SNAPSHOT_BEGIN = { t: "snap" } as const;
export const SNAPSHOT_END = { t: "snap-end" } as const;

const isMark = (record: unknown, t: string) =>
  typeof record === "object" && record !== null && (record as { t?: unknown }).t === t;

export interface SegmentProblem {
  readonly file: string;
  readonly problem: string;
}

export interface ReadJournal {
  /** The records to replay, oldest first: from the last complete snapshot on. */
  readonly records: unknown[];
  readonly segments: number[];
  readonly problems: SegmentProblem[];
  readonly bytes: number;
}

export function listSegments(dir: string): number[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .map((name) => SEGMENT.exec(name)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
}

function describeTorn(torn: TornTail): string {
  return `${torn.reason} at byte ${torn.offset}; ${torn.skippedBytes} bytes skipped`;
}

/** Reads every segment of `dir` (synchronously: at startup, before the listener opens). */
export function readJournal(dir: string): ReadJournal {
  const segments = listSegments(dir);
  let records: unknown[] = [];
  const problems: SegmentProblem[] = [];
  let bytes = 0;
  for (const n of segments) {
    const file = join(dir, segmentName(n));
    let data: Buffer;
    try {
      data = readFileSync(file);
    } catch (err) {
      problems.push({ file, problem: `unreadable (${(err as Error).message})` });
      continue;
    }
    bytes += data.length;
    const decoded = decodeRecords(data);
    if (decoded.torn !== undefined) problems.push({ file, problem: describeTorn(decoded.torn) });
    const list = decoded.records;
    if (list.length > 0 && isMark(list[0], SNAPSHOT_BEGIN.t)) {
      const end = list.findIndex((record) => isMark(record, SNAPSHOT_END.t));
      if (end < 0) {
        problems.push({ file, problem: "its snapshot is incomplete; the segments before it are used" });
        continue;
      }
      // A complete snapshot restates everything live: what came before it is superseded.
      records = [...list.slice(1, end), ...list.slice(end + 1)];
    } else {
      for (const record of list) records.push(record);
    }
  }
  return { records, segments, problems, bytes };
}

/** Removes what a rotation cut short by a crash left (it was never a segment: the old ones hold it all). */
export function removeTempSegments(dir: string): void {
  for (const name of readdirSync(dir)) if (TEMP_SEGMENT.test(name)) rmSync(join(dir, name), { force: true });
}

/** The directory for segments, created private. */
export function ensureJournalDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
}

function syncDir(dir: string): void {
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Starts segment `n` holding `snapshot` (synchronously, at startup), makes it durable, then removes
 * the segments before it. Returns the open file descriptor (append mode, 0600).
 */
export function startSegmentSync(dir: string, n: number, snapshot: Buffer, older: readonly number[]): number {
  const fd = openSync(join(dir, segmentName(n)), "a", 0o600);
  let rest = snapshot;
  while (rest.length > 0) rest = rest.subarray(writeSync(fd, rest));
  fdatasyncSync(fd);
  syncDir(dir);
  for (const old of older) rmSync(join(dir, segmentName(old)), { force: true });
  return fd;
}
