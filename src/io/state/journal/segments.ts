import { constants } from "node:buffer";
import {
  chmodSync,
  closeSync,
  fdatasyncSync,
  fstatSync,
  fsyncSync,
  lstatSync,
  openSync,
  readdirSync,
  readlinkSync,
  readSync,
  renameSync,
  rmSync,
  type Stats,
  truncateSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { privateDir } from "../../privateMode.js";
import {
  describeIdNotAFile,
  idKeptAs,
  isJournalId,
  isJournalIdTemp,
  JOURNAL_ID_FILE,
  readJournalId,
} from "./identity.js";
import { type DecodedSegment, decodeRecords, type TornTail } from "./records.js";

/** Segment files: `journal-000001.seg`, numbered in the order they were started. */
const SEGMENT = /^journal-(\d{6,})\.seg$/;

export const segmentName = (n: number): string => `journal-${String(n).padStart(6, "0")}.seg`;

/** A segment being built by a rotation; renamed to its segment name once whole and durable. */
export const tempSegmentName = (n: number): string => `${segmentName(n)}.tmp`;
const TEMP_SEGMENT = /^journal-\d{6,}\.seg\.tmp$/;

/**
 * The first and last record of a snapshot; a snapshot without its end was torn and is not used. The first
 * names the journal (`j`, its id: `identity.ts`) and the segment's own number (`n`): `snapshotBegin`. An
 * earlier version of svc wrote it without them (`SNAPSHOT_BEGIN` as it is).
 */
export const SNAPSHOT_BEGIN = { t: "snap" } as const;
export const SNAPSHOT_END = { t: "snap-end" } as const;

/** The first record of segment `n`'s snapshot, in the journal `id`. */
export const snapshotBegin = (id: string, n: number) => ({ t: SNAPSHOT_BEGIN.t, j: id, n });

const isMark = (record: unknown, t: string) =>
  typeof record === "object" && record !== null && (record as { t?: unknown }).t === t;

/** The journal and segment number a snapshot's first record names; undefined when it names none (an earlier version's). */
function namedBy(record: unknown): { readonly j: string; readonly n: number } | undefined {
  if (!isMark(record, SNAPSHOT_BEGIN.t)) return undefined;
  const { j, n } = record as { j?: unknown; n?: unknown };
  return isJournalId(j) && Number.isSafeInteger(n) ? { j, n: n as number } : undefined;
}

export interface SegmentProblem {
  readonly file: string;
  /** What was wrong with it and what the start did about it. */
  readonly problem: string;
}

export interface ReadJournal {
  /** The records to replay, oldest first: from the last complete snapshot on. */
  readonly records: unknown[];
  readonly segments: number[];
  readonly problems: SegmentProblem[];
  /** Bytes of records read (not the zeros a segment was grown into). */
  readonly bytes: number;
  /**
   * Damaged segments (more skipped than the tail a crash cuts short), and what is at a segment's name but
   * is no segment of this journal (another journal's, a copy of one of this journal's under another number,
   * a link or a directory), by number: once the new snapshot is durable they are renamed to the name given
   * here instead of removed, so what was skipped is not lost.
   */
  readonly keep: Map<number, string>;
  /**
   * Segments that end in zeros (the space the writer grew them into ahead of their records), by number: where
   * the zeros begin. The start cuts them off before it writes its snapshot (`trimGrownSpace`); not those in
   * `keep`, which are kept as they were.
   */
  readonly zerosFrom: Map<number, number>;
  /**
   * The journal's id: the one `journal.id` holds, or, without that file, the one named by the segment whose
   * snapshot a start replays (`latestSnapshot`); undefined when that segment names none (written by an
   * earlier version of svc) or there is none yet: the start makes one.
   */
  readonly id: string | undefined;
  /**
   * Whether `journal.id` holds `id` already, as this version writes it (otherwise the start writes it: a file
   * with the directory line an earlier version wrote is written again without it).
   */
  readonly idStored: boolean;
  /** What the start sets aside a `journal.id` that is no file as (said in `problems` when it found one). */
  readonly idKeptAs: string;
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

const describeSkip = (skip: TornTail): string =>
  `${skip.reason} at byte ${skip.offset}; ${skip.skippedBytes} bytes skipped`;

/** A crash leaves at most a record cut short at the end; anything else skipped was damaged on disk. */
const onlyCrashTail = (decoded: DecodedSegment): boolean =>
  decoded.skipped.length === 0 &&
  (decoded.torn === undefined ||
    decoded.torn.reason === "truncated header" ||
    decoded.torn.reason === "truncated record");

/**
 * Whether the segment's first record, at byte 0, is the first mark of its snapshot. Every segment's is, durable
 * before any record follows it: one that does not start so was damaged or edited, not cut short by a crash.
 */
const startsWithSnapshot = (decoded: DecodedSegment): boolean =>
  decoded.skipped[0]?.offset !== 0 &&
  decoded.torn?.offset !== 0 &&
  isMark(decoded.records[0], SNAPSHOT_BEGIN.t);

const KEPT_FOR_INSPECTION = "inspect it as docs/durability.md shows, then delete it";

/**
 * What a later segment's complete snapshot makes of one before it that lost what it held: it restates
 * everything live, so nothing the earlier one held is lost. `by`: that later segment's name.
 */
const notNeeded = (by: string) =>
  `it was not needed: ${by}, after it, starts with a complete snapshot of everything live, which was replayed, so nothing was lost`;

/**
 * A segment of which no record could be read (damaged from byte 0 on, no intact record after): kept aside
 * as `keptAs`. `older`: segments of this journal before it were read, which a start uses instead;
 * `supersededBy`: a later segment's complete snapshot was replayed (`notNeeded`).
 */
function describeNothingRead(
  torn: TornTail | undefined,
  older: boolean,
  keptAs: string,
  supersededBy: string | undefined,
): string {
  const where = torn === undefined ? "" : ` (${describeSkip(torn)})`;
  if (supersededBy !== undefined)
    return `no record of it could be read${where}; ${notNeeded(supersededBy)}; the segment is kept as ${keptAs} (${KEPT_FOR_INSPECTION})`;
  const lost = older
    ? "nothing was replayed from it; the segments before it are, and what was appended to it alone is lost (nothing, if it was a file put there that was never a segment of this journal)"
    : "what it held is lost (the runs it owed do not run, its coalescing groups do not fire, and the delivery ids it remembered are forgotten: a sender's retry of one is taken as new); nothing was replayed from it";
  return `no record of it could be read${where}, though every segment starts with a snapshot: ${lost}; the segment is kept as ${keptAs} (${KEPT_FOR_INSPECTION})`;
}

/** A segment with nothing written in it (0 bytes, or zeros only) and no segment of this journal before it. */
function describeNothingWritten(bytes: number, supersededBy: string | undefined): string {
  const what = bytes === 0 ? "is empty (0 bytes)" : `holds only zero bytes (${bytes} bytes)`;
  if (supersededBy !== undefined) return `${what}; ${notNeeded(supersededBy)}`;
  return `${what}, though every segment starts with a snapshot: what it held is lost (${bytes === 0 ? "the file was truncated, or the file system lost its data" : "the file system lost its data, as a power cut can"}), unless the very first start in this directory was cut short before its snapshot reached the disk; nothing was replayed from it`;
}

/** What is set aside as no segment of this journal: said of each, whatever it holds. */
const setAside = (keptAs: string, inspect: string) =>
  `nothing of it was replayed, and it is set aside as ${keptAs} (${inspect})`;

/** Something at a segment's name that is no file (a symbolic link, a directory): no segment svc wrote. */
function describeNotAFile(file: string, found: Stats, keptAs: string): string {
  let what: string;
  if (found.isSymbolicLink()) {
    let target = "";
    try {
      target = ` to ${readlinkSync(file)}`;
    } catch {
      // Gone meanwhile: said without its target.
    }
    what = `is a symbolic link${target}`;
  } else if (found.isDirectory()) what = "is a directory";
  else what = "is not a regular file (a named pipe, a socket or a device)";
  return `${what}, not a file: svc writes its segments as files, never as that, so it is no segment of this journal but something put at this name; ${setAside(keptAs, "look at it, then delete it")}`;
}

/**
 * Segment `n`, whose snapshot names (`named`) another journal than `id`, or this one under another number (a
 * copy of one of its segments put at another name), or any journal while this one has none yet (`id` undefined:
 * an earlier version's segments): not this journal's continuation. `idFrom`: where `id` came from.
 */
function describeForeign(
  named: { readonly j: string; readonly n: number },
  id: string | undefined,
  n: number,
  keptAs: string,
  idFrom: string,
): string {
  const why =
    id === undefined
      ? `its snapshot names journal ${named.j} (as its segment ${named.n}) while this journal has no id yet (its segments, in an earlier version's form, name none): a file of another state directory put at this name (by hand, a restore or a sync tool)`
      : named.j === id
        ? `its snapshot says it is segment ${named.n} of this journal, not segment ${n}: a copy of one of this journal's segments put at this name (by hand, a restore or a sync tool)`
        : `its snapshot names another journal (${named.j}; this one is ${id}, as ${idFrom} says): a file of another state directory put at this name (by hand, a restore or a sync tool)`;
  return `is not this journal's: ${why}; ${setAside(keptAs, KEPT_FOR_INSPECTION)}`;
}

/** A segment in an earlier version's form (its snapshot names no journal) after one of this journal's, `after`. */
function describeUnnamedAfter(after: string, keptAs: string): string {
  return `is not this journal's: its snapshot names no journal, as an earlier version of svc wrote them, yet it comes after ${after}, which names this one: a file put at this name (by hand, a restore or a sync tool), not this journal's continuation; ${setAside(keptAs, KEPT_FOR_INSPECTION)}`;
}

function describeDamage(
  decoded: DecodedSegment,
  unknown: number,
  keptAs: string | undefined,
  snapshotFirst: boolean,
): string | undefined {
  const parts: string[] = [];
  // Damage at byte 0 is said by the skip that follows; an intact first record that is no snapshot mark here.
  const noSnapshot = !snapshotFirst && decoded.skipped[0]?.offset !== 0;
  if (noSnapshot)
    parts.push(
      "it does not start with a snapshot, though every segment does (it was edited, or its start was lost): its records were replayed as they are",
    );
  if (unknown > 0)
    parts.push(
      `${unknown} record(s) this version of svc cannot read (written by a newer version, or edited by hand) skipped`,
    );
  const [first, ...more] = decoded.skipped;
  if (first !== undefined)
    parts.push(
      `${describeSkip(first)}${more.length > 0 ? ` (and ${more.length} more damaged stretch(es))` : ""}, the records after ${more.length > 0 ? "each" : "it"} recovered`,
    );
  if (decoded.torn !== undefined)
    parts.push(`${describeSkip(decoded.torn)} — the records before it were recovered, the rest skipped`);
  if (parts.length === 0) return undefined;
  const kept =
    keptAs === undefined
      ? ""
      : `; the segment is kept as ${keptAs} (${parts.length > (noSnapshot ? 1 : 0) ? "what was skipped is in it: " : ""}${KEPT_FOR_INSPECTION})`;
  return `${parts.join("; ")}${kept}`;
}

/** What one read asks for at most (a read is limited to just under 2 GiB). */
const READ_CHUNK_BYTES = 1024 * 1024 * 1024;

/**
 * The whole segment, read a chunk at a time: `readFileSync` refuses a file past 2 GiB, which a backlog of
 * runs with large prompts makes, and the start would then be refused with every run in it.
 */
export function readSegment(file: string): Buffer {
  const fd = openSync(file, "r");
  try {
    const size = fstatSync(fd).size;
    if (size > constants.MAX_LENGTH)
      throw new Error(`it holds ${size} bytes, more than one buffer takes (${constants.MAX_LENGTH})`);
    const data = Buffer.allocUnsafe(size);
    let read = 0;
    while (read < size) {
      const n = readSync(fd, data, read, Math.min(size - read, READ_CHUNK_BYTES), read);
      if (n === 0) break;
      read += n;
    }
    return data.subarray(0, read);
  } finally {
    closeSync(fd);
  }
}

export interface ReadOptions {
  /** Names a damaged segment kept aside (`.damaged-<ms>`). */
  readonly now?: () => number;
  /** Whether a record can be replayed; one that cannot (a newer version's) is skipped and its segment kept. */
  readonly understood?: (record: unknown) => boolean;
}

/**
 * Without `journal.id`: the last segment whose snapshot is complete (what a start replays, as an earlier
 * version's start did, whatever it names), not counting one that names a number other than its own (a copy
 * put at that name, whichever journal it is of), and the journal it names, if any. Undefined when none has one.
 */
function latestSnapshot(
  dir: string,
  segments: readonly number[],
): { readonly index: number; readonly id: string | undefined } | undefined {
  for (let index = segments.length - 1; index >= 0; index -= 1) {
    const n = segments[index] as number;
    const file = join(dir, segmentName(n));
    if (lstatSync(file, { throwIfNoEntry: false })?.isFile() !== true) continue;
    let decoded: DecodedSegment;
    try {
      decoded = decodeRecords(readSegment(file));
    } catch {
      // The read that follows says what is wrong with it.
      continue;
    }
    if (!startsWithSnapshot(decoded)) continue;
    if (!decoded.records.some((record) => isMark(record, SNAPSHOT_END.t))) continue;
    const names = namedBy(decoded.records[0]);
    if (names !== undefined && names.n !== n) continue;
    return { index, id: names?.j };
  }
  return undefined;
}

/**
 * Reads every segment of `dir` (synchronously: at startup, before the listener opens). Only this journal's
 * chain is replayed: what is at a segment's name but is no segment of this journal (a link, a directory,
 * another journal's segment, a copy of one of this journal's under another number) is set aside (`keep`).
 */
export function readJournal(dir: string, options: ReadOptions = {}): ReadJournal {
  const now = options.now ?? Date.now;
  const understood = options.understood ?? (() => true);
  const segments = listSegments(dir);
  const stored = readJournalId(dir);
  // Without journal.id, the id of the segment whose snapshot is replayed. When that one names none (an earlier
  // version's journal), this journal has no id yet: the segments up to it are read as that version read them,
  // and one after it that names a journal is not this one's.
  const latest = stored.id === undefined ? latestSnapshot(dir, segments) : undefined;
  const id = stored.id ?? latest?.id;
  const idFrom =
    stored.id !== undefined || latest === undefined
      ? JOURNAL_ID_FILE
      : `${segmentName(segments[latest.index] as number)}, whose snapshot was replayed (there is no usable ${JOURNAL_ID_FILE}),`;
  const judgedById = (index: number) => id !== undefined || (latest !== undefined && index > latest.index);
  let records: unknown[] = [];
  const problems: SegmentProblem[] = [];
  const keep = new Map<number, string>();
  const zerosFrom = new Map<number, number>();
  let bytes = 0;
  /** Problems whose words depend on whether a later segment's complete snapshot was replayed. */
  const later: Array<{ readonly at: number; readonly index: number; readonly say: (by?: string) => string }> =
    [];
  const sayLater = (index: number, file: string, say: (by?: string) => string) => {
    later.push({ at: problems.length, index, say });
    problems.push({ file, problem: say() });
  };
  /** The last segment whose complete snapshot was replayed (what was before it is superseded). */
  let snapshotAt: { readonly index: number; readonly name: string } | undefined;
  /** Segments of this journal read so far (not those set aside as no segment of it). */
  let read = 0;
  /** The last segment read whose snapshot names this journal. */
  let named: string | undefined;
  for (const [index, n] of segments.entries()) {
    const name = segmentName(n);
    const file = join(dir, name);
    const found = lstatSync(file, { throwIfNoEntry: false });
    // Removed since it was listed.
    if (found === undefined) continue;
    if (!found.isFile()) {
      const keptAs = `${name}.foreign-${now()}`;
      keep.set(n, keptAs);
      problems.push({ file, problem: describeNotAFile(file, found, keptAs) });
      continue;
    }
    let data: Buffer;
    try {
      data = readSegment(file);
    } catch (err) {
      // Never replaced by a snapshot without it: that would drop every run it holds.
      throw new Error(`${file} cannot be read (${(err as Error).message})`);
    }
    // Every segment starts with a snapshot, made durable before the older ones are removed: empty (or zeros
    // only: a power cut after the file grew) with none before it, it lost what it held, unless the first
    // start here was cut short before its snapshot was synced, or a later segment's snapshot restates it all;
    // after an older one, that older one holds it all.
    const nothingWritten = data.every((byte) => byte === 0);
    if (nothingWritten && read === 0) sayLater(index, file, (by) => describeNothingWritten(data.length, by));
    if (nothingWritten) {
      read += 1;
      continue;
    }
    const decoded = decodeRecords(data);
    const snapshotFirst = startsWithSnapshot(decoded);
    // Whose segment it is, as its snapshot's first record says: this journal's at its own number, or not.
    const names = snapshotFirst ? namedBy(decoded.records[0]) : undefined;
    if (names !== undefined && judgedById(index) && (names.n !== n || names.j !== id)) {
      const keptAs = `${name}.foreign-${now()}`;
      keep.set(n, keptAs);
      problems.push({ file, problem: describeForeign(names, id, n, keptAs, idFrom) });
      continue;
    }
    // Only against journal.id: without it, the id came from the latest snapshot, and one before it that names
    // none is this journal's as an earlier version wrote it.
    if (names === undefined && snapshotFirst && named !== undefined && stored.id !== undefined) {
      const keptAs = `${name}.foreign-${now()}`;
      keep.set(n, keptAs);
      problems.push({ file, problem: describeUnnamedAfter(named, keptAs) });
      continue;
    }
    if (names !== undefined) named = name;
    const older = read > 0;
    read += 1;
    bytes += data.length - (decoded.unused ?? 0);
    const list = decoded.records.filter(
      (record) => isMark(record, SNAPSHOT_BEGIN.t) || isMark(record, SNAPSHOT_END.t) || understood(record),
    );
    const unknown = decoded.records.length - list.length;
    const keptAs =
      onlyCrashTail(decoded) && unknown === 0 && snapshotFirst ? undefined : `${name}.damaged-${now()}`;
    if (keptAs !== undefined) keep.set(n, keptAs);
    if (decoded.records.length === 0 && keptAs !== undefined) {
      // Not "the records before it were recovered": there were none.
      sayLater(index, file, (by) => describeNothingRead(decoded.torn, older, keptAs, by));
      continue;
    }
    // One kept aside is left as it was read.
    const written =
      decoded.torn === undefined
        ? data.length - (decoded.unused ?? 0)
        : decoded.torn.offset + decoded.torn.skippedBytes;
    if (keptAs === undefined && written < data.length) zerosFrom.set(n, written);
    const damage = describeDamage(decoded, unknown, keptAs, snapshotFirst);
    if (damage !== undefined) problems.push({ file, problem: damage });
    if (list.length > 0 && isMark(list[0], SNAPSHOT_BEGIN.t)) {
      const end = list.findIndex((record) => isMark(record, SNAPSHOT_END.t));
      if (end < 0 && older) {
        problems.push({
          file,
          problem: "its snapshot is incomplete (a start was cut short); the segments before it are used",
        });
        continue;
      }
      if (end < 0) {
        // No segment before it: the snapshot was durable when they were removed, so it was damaged since.
        problems.push({
          file,
          problem: `its snapshot has no end and no segment precedes it; the ${list.length - 1} record(s) read from it are used`,
        });
        records = list.slice(1);
        continue;
      }
      // A complete snapshot restates everything live: what came before it is superseded.
      records = [...list.slice(1, end), ...list.slice(end + 1)];
      snapshotAt = { index, name };
    } else {
      // A snapshot whose first mark was damaged (skipped above): its records are read as appends, and a
      // mark is no record to replay (nor one "not understood").
      for (const record of list)
        if (!isMark(record, SNAPSHOT_BEGIN.t) && !isMark(record, SNAPSHOT_END.t)) records.push(record);
    }
  }
  for (const { at, index, say } of later) {
    const by = snapshotAt !== undefined && snapshotAt.index > index ? snapshotAt.name : undefined;
    if (by !== undefined) problems[at] = { file: (problems[at] as SegmentProblem).file, problem: say(by) };
  }
  const idAside = stored.notAFile === true ? idKeptAs(now()) : undefined;
  if (idAside !== undefined)
    problems.push({
      file: join(dir, JOURNAL_ID_FILE),
      problem: describeIdNotAFile(
        join(dir, JOURNAL_ID_FILE),
        idAside,
        id === undefined ? "a new id" : `the id the segments name (${id})`,
      ),
    });
  else if (stored.problem !== undefined)
    problems.push({
      file: join(dir, JOURNAL_ID_FILE),
      problem: `${stored.problem}; ${id === undefined ? "a new id is written in its place" : `it is written again with the id the segments name (${id})`}`,
    });
  return {
    records,
    segments,
    problems,
    bytes,
    keep,
    zerosFrom,
    id,
    idStored: stored.id !== undefined && stored.dirLine !== true,
    idKeptAs: idAside ?? idKeptAs(now()),
  };
}

/**
 * Cuts the zeros off the end of the segments read (`ReadJournal.zerosFrom`): a gateway that crashed left
 * them, up to a step of growth each, and on a disk they filled the start's snapshot would find no room and
 * the start would be refused with runs still owed. Nothing is lost: no record is in them. A cut that fails
 * is left (the snapshot's write then says what is wrong).
 */
export function trimGrownSpace(dir: string, zerosFrom: ReadonlyMap<number, number>): void {
  for (const [n, end] of zerosFrom) {
    try {
      truncateSync(join(dir, segmentName(n)), end);
    } catch {
      // Read a moment ago, so it is there: a file system that refuses the cut refuses the snapshot too.
    }
  }
}

/**
 * Removes what a rotation cut short by a crash left (it was never a segment: the old ones hold it all), and
 * what a write of `journal.id` cut short left (the file itself was never replaced by part of one).
 */
export function removeTempSegments(dir: string): void {
  for (const name of readdirSync(dir))
    if (TEMP_SEGMENT.test(name) || isJournalIdTemp(name)) rmSync(join(dir, name), { force: true });
}

/**
 * The directory for segments, private: created 0700, and one that already existed wider (made by hand,
 * restored from a backup) is narrowed to 0700, as docs/durability.md says (its files hold payload text).
 */
export function ensureJournalDir(dir: string): void {
  privateDir(dir);
}

function syncDir(dir: string): void {
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** What is at an older segment's name that could not be set aside as `keptAs`: left where it is. */
export interface LeftInPlace {
  readonly file: string;
  readonly keptAs: string;
  readonly err: unknown;
}

/**
 * Starts segment `n` holding `snapshot` (synchronously, at startup), makes it durable, then removes
 * the segments before it (one named in `keep`, damaged or no segment of this journal, is renamed instead;
 * one that cannot be renamed is left where it is and passed to `onLeft`). Returns the open file
 * descriptor (0600; not in append mode: the writer's writes name their position).
 */
export function startSegmentSync(
  dir: string,
  n: number,
  snapshot: Buffer,
  older: readonly number[],
  keep: ReadonlyMap<number, string> = new Map(),
  onLeft: (left: LeftInPlace) => void = () => {},
): number {
  const file = join(dir, segmentName(n));
  const fd = openSync(file, "w", 0o600);
  try {
    let rest = snapshot;
    while (rest.length > 0) rest = rest.subarray(writeSync(fd, rest));
    fdatasyncSync(fd);
    syncDir(dir);
  } catch (err) {
    // A start refused for a full disk leaves no piece of a segment behind (the older ones hold it all).
    closeSync(fd);
    rmSync(file, { force: true });
    throw err;
  }
  for (const old of older) {
    const keptAs = keep.get(old);
    const path = join(dir, segmentName(old));
    if (keptAs === undefined) {
      rmSync(path, { force: true });
      continue;
    }
    try {
      renameSync(path, join(dir, keptAs));
    } catch (err) {
      // The new segment is durable: a start goes on. What is left is read again by the next, and set aside.
      onLeft({ file: path, keptAs, err });
      continue;
    }
    // It holds payloads: owner-only, as every segment is written, whatever mode a restore gave it. Not a link
    // (chmod would change what it points to) nor a directory (it would be closed to its owner too).
    if (lstatSync(join(dir, keptAs), { throwIfNoEntry: false })?.isFile() === true)
      chmodSync(join(dir, keptAs), 0o600);
  }
  return fd;
}
