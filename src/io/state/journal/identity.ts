import { randomBytes } from "node:crypto";
import {
  type BigIntStats,
  closeSync,
  fsyncSync,
  lstatSync,
  openSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";

/**
 * The journal's identity: a random id made when the journal is first written, kept in `journal.id` beside
 * its segments and named by the first record of each segment's snapshot, with the segment's own number. A
 * start replays only segments of this journal (a file put at a segment's name from another state directory,
 * or a copy of one of this journal's segments under another number, is set aside).
 *
 * The file holds the id alone. One an earlier version wrote also holds a second line, `dir <dev>:<ino>` (the
 * state directory it was written in), which nothing reads: the id is read from it as from any other, and the
 * start writes the file again without the line.
 */
export const JOURNAL_ID_FILE = "journal.id";
const JOURNAL_ID_TEMP = `${JOURNAL_ID_FILE}.tmp`;

const JOURNAL_ID = /^[0-9a-f]{32}$/;
/** The second line an earlier version wrote (the state directory's device and inode); nothing reads it. */
const DIR_LINE = /^dir \d+:\d+$/;

/**
 * The state directory `dir` as the file system knows it (device and inode); undefined when it is gone, or when no
 * directory can be reached at its name: a symbolic link into a loop of links (ELOOP), one to a name below a file
 * (ENOTDIR), one to a name too long, one this user may not follow. Asked by the journal's look each second, whatever
 * stands there, so it never throws.
 */
export function dirIdentity(dir: string): string | undefined {
  let stats: BigIntStats | undefined;
  try {
    stats = statSync(dir, { throwIfNoEntry: false, bigint: true });
  } catch {
    return undefined;
  }
  return stats === undefined ? undefined : `${stats.dev}:${stats.ino}`;
}

export const isJournalId = (value: unknown): value is string =>
  typeof value === "string" && JOURNAL_ID.test(value);

export const newJournalId = (): string => randomBytes(16).toString("hex");

/** What `journal.id` in `dir` holds: the id, none (no such file), or what is wrong with it. */
export interface StoredJournalId {
  readonly id?: string;
  /** Whether it also holds the `dir <dev>:<ino>` line an earlier version wrote: written again without it. */
  readonly dirLine?: boolean;
  /** What is wrong with the file (there, but no id read from it). */
  readonly problem?: string;
  /** Whether it is no file (a directory, a symbolic link): set aside when the id is written (`writeJournalId`). */
  readonly notAFile?: boolean;
}

/** What is at `file` that is no file: said when it is set aside. */
function describeNotAFile(file: string): string {
  const found = lstatSync(file, { throwIfNoEntry: false });
  if (found?.isSymbolicLink() === true) {
    let target = "";
    try {
      target = ` to ${readlinkSync(file)}`;
    } catch {
      // Gone meanwhile: said without its target.
    }
    return `is a symbolic link${target}`;
  }
  if (found?.isDirectory() === true) return "is a directory";
  return "is not a regular file (a named pipe, a socket or a device)";
}

/** What the start (or a relocation) says of a `journal.id` that is no file, set aside as `keptAs`. */
export const describeIdNotAFile = (file: string, keptAs: string, written: string): string =>
  `${describeNotAFile(file)}, not a file: svc writes it as a file, never as that; it is set aside as ${keptAs} (look at it, then delete it), and ${written} is written in its place`;

/** The name a `journal.id` that is no file is set aside as, at `ms`. */
export const idKeptAs = (ms: number): string => `${JOURNAL_ID_FILE}.foreign-${ms}`;

export function readJournalId(dir: string): StoredJournalId {
  const file = join(dir, JOURNAL_ID_FILE);
  const found = lstatSync(file, { throwIfNoEntry: false });
  if (found === undefined) return {};
  if (!found.isFile()) return { problem: "is not a file", notAFile: true };
  let text: string;
  try {
    text = readFileSync(file, "utf8").trim();
  } catch (err) {
    return { problem: `cannot be read (${(err as Error).message})` };
  }
  const [id, dirLine, ...rest] = text.split("\n").map((line) => line.trim());
  if (!isJournalId(id) || rest.length > 0) return { problem: "does not hold a journal id" };
  if (dirLine === undefined) return { id };
  return DIR_LINE.test(dirLine) ? { id, dirLine: true } : { problem: "does not hold a journal id" };
}

/**
 * Writes `id` (alone, on a line) to `journal.id` in `dir` (mode 0600) so that a reader sees the old file or the
 * new one, never part of one: a temp file, synced, renamed into place, the directory synced. What is at that name and is no file (a directory, a symbolic link: a rename cannot replace the one,
 * and the other is no file svc wrote) is set aside as `keptAs` first; returns true when it was.
 */
export function writeJournalId(dir: string, id: string, keptAs: string): boolean {
  const file = join(dir, JOURNAL_ID_FILE);
  const found = lstatSync(file, { throwIfNoEntry: false });
  const setAside = found !== undefined && !found.isFile();
  if (setAside) renameSync(file, join(dir, keptAs));
  const temp = join(dir, JOURNAL_ID_TEMP);
  const fd = openSync(temp, "w", 0o600);
  try {
    const data = Buffer.from(`${id}\n`);
    for (let at = 0; at < data.length; ) at += writeSync(fd, data, at);
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    rmSync(temp, { force: true });
    throw err;
  }
  closeSync(fd);
  renameSync(temp, file);
  const dirFd = openSync(dir, "r");
  try {
    fsyncSync(dirFd);
  } finally {
    closeSync(dirFd);
  }
  return setAside;
}

/** The temp file a write of `journal.id` cut short by a crash left (the start removes it). */
export const isJournalIdTemp = (name: string): boolean => name === JOURNAL_ID_TEMP;
