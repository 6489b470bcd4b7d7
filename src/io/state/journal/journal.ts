import { close as closeFd, lstatSync, readlinkSync, statSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { Clock } from "../../../clock.js";
import { pathMovedFrom } from "../../batchedWriter.js";
import { type DirLock, lockStateDir, StateDirTakenOver } from "./dirLock.js";
import { type JournalFs, nodeJournalFs } from "./fsFacade.js";
import { GroupCommitWriter } from "./groupCommit.js";
import {
  describeIdNotAFile,
  dirIdentity,
  idKeptAs,
  JOURNAL_ID_FILE,
  newJournalId,
  readJournalId,
  writeJournalId,
} from "./identity.js";
import { RecordBuffer } from "./records.js";
import {
  JournalNotRecreated,
  PreviousSegmentLeft,
  RestateFailed,
  RotationBlocked,
  RotationFailed,
  RotationLeftSegment,
  RotationStopped,
  type SegmentBuilt,
  SegmentNameTaken,
  SegmentRotation,
} from "./rotation.js";
import {
  ensureJournalDir,
  listSegments,
  readJournal,
  removeTempSegments,
  type SegmentProblem,
  SNAPSHOT_END,
  segmentName,
  snapshotBegin,
  startSegmentSync,
  trimGrownSpace,
} from "./segments.js";

/** A segment is rotated past this size (or twice its own snapshot, when that is larger). */
export const DEFAULT_MAX_SEGMENT_BYTES = 64 * 1024 * 1024;

/** How often a flush looks whether the current segment's path still names its file (a stat, at most once a second). */
export const SEGMENT_CHECK_MS = 1000;

export interface JournalOptions {
  readonly dir: string;
  readonly fs?: JournalFs;
  readonly maxSegmentBytes?: number;
  /**
   * A segment that could not be read whole (torn or corrupt tail, incomplete snapshot), or what is at a
   * segment's name but no segment of this journal (set aside): logged, skipped.
   */
  readonly onProblem?: (problem: SegmentProblem) => void;
  /** The clock of the once-a-second look at the segment's path (default `Date.now`). */
  readonly now?: () => number;
  /**
   * The timers of that look when no batch is written (default: the process's, which keep no process
   * alive): a gateway that writes nothing for a while still finds its segment gone.
   */
  readonly timers?: Pick<Clock, "setTimeout" | "clearTimeout">;
  /** Whether a record read back can be replayed (default: every one); see `readJournal`. */
  readonly understood?: (record: unknown) => boolean;
  /**
   * A failed write or sync (the waiting appends are rejected; once per outage: not again until a sync
   * succeeds, as every later append fails too on a full disk); a `RotationFailed` or `PreviousSegmentLeft`
   * (nothing is); a `RotationLeftSegment` (from then on every append is rejected); a `JournalNotRecreated`
   * (the requests waiting are answered 503, and later ones until the next try, a second later, succeeds, or a look
   * finds the directory this journal wrote in back in its place: `onWrittenAgain`; said once,
   * again only when a try fails with something else in the directory's place);
   * a `StateDirTakenOver` (another gateway took the state directory: requests answer 503 from then on); a
   * `RotationBlocked` (a file not this gateway's is at the next segment's name: nothing is refused, the journal
   * rotates again once it is moved away; said once).
   */
  readonly onError?: (err: unknown) => void;
  /**
   * After a `JournalNotRecreated`, the state directory this journal wrote in is back in its place (moved back, or
   * what stood there removed and the directory put back): `file`, its segment, is written again and requests
   * are recorded again, with no new segment.
   */
  readonly onWrittenAgain?: (file: string) => void;
}

/** The process's timers, none of which keeps it alive. */
const UNREF_TIMERS: Pick<Clock, "setTimeout" | "clearTimeout"> = {
  setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
  clearTimeout: (id) => clearTimeout(id as NodeJS.Timeout),
};

/** What the journal held at open, for the log. */
export interface JournalOpened {
  readonly records: number;
  readonly segments: number;
  readonly bytes: number;
}

/** Segment `n`'s snapshot of `records`, in the journal `id`. */
function encodeSnapshot(id: string, n: number, records: Iterable<unknown>): Buffer {
  const out = new RecordBuffer();
  out.add(snapshotBegin(id, n));
  for (const record of records) out.add(record);
  out.add(SNAPSHOT_END);
  return out.data();
}

/** A segment's path no longer names its file: the requests waiting meanwhile are held until it is settled. */
interface Relocation {
  readonly held: Promise<void>;
  readonly release: () => void;
  readonly refuse: (err: unknown) => void;
}

function newRelocation(): Relocation {
  let release: () => void = () => {};
  let refuse: (err: unknown) => void = () => {};
  const held = new Promise<void>((resolve, reject) => {
    release = resolve;
    refuse = reject;
  });
  // Rejected with nobody holding a batch on it: no unhandled rejection.
  held.catch(() => {});
  return { held, release, refuse };
}

/**
 * What stands in `dir`'s place, to tell whether it changed: nothing, a symbolic link (its text, and what it leads
 * to), or what is there (its kind, device and inode).
 */
function inPlaceOf(dir: string): string {
  let found: ReturnType<typeof lstatSync>;
  try {
    found = lstatSync(dir, { throwIfNoEntry: false });
  } catch (err) {
    return `unseen ${(err as NodeJS.ErrnoException).code}`; // a refusal on the way, or a file above it
  }
  if (found === undefined) return "none";
  if (!found.isSymbolicLink()) return `${found.mode & 0o170000} ${found.dev} ${found.ino}`;
  let to: string;
  try {
    const target = statSync(dir);
    to = `${target.mode & 0o170000} ${target.dev} ${target.ino}`;
  } catch (err) {
    to = (err as NodeJS.ErrnoException).code ?? "unknown";
  }
  try {
    return `link ${readlinkSync(dir)} ${to}`;
  } catch {
    return "changing"; // removed or replaced meanwhile: looked at again at the next try
  }
}

/**
 * Whether `file` itself (not what it leads to) is there, or cannot be looked at: the state directory replaced by a
 * loop of links (ELOOP) or a link to a name below a file (ENOTDIR) hides it, and a refusal (EACCES) too. Only a
 * name found missing is gone.
 */
function entryMaybeThere(file: string): boolean {
  try {
    return lstatSync(file, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return true;
  }
}

/** The directory at `dir` (device and inode), to tell it from one made again at its path; undefined when none is. */
const closeRawFd = (fd: number) =>
  new Promise<void>((resolve) => {
    closeFd(fd, () => resolve());
  });

/**
 * The append-only journal: segments under `dir`, group commit on the current one. Every open replays the
 * segments (`restore`), then starts a new segment with a snapshot of what is still live (`snapshot`) and
 * removes the old ones. A segment past its size is rotated while the gateway runs, in the background
 * (`SegmentRotation`): appends stay durable in the current segment until the new one holds all of it.
 */
export class Journal {
  private readonly writer: GroupCommitWriter;
  private segment: number;
  /** The current segment's file descriptor. */
  private fd: number;
  private closeCurrent: () => Promise<void>;
  private snapshotBytes: number;
  private readonly lock: DirLock;
  private readonly fs: JournalFs;
  private rotation: SegmentRotation | undefined;
  private rotating: Promise<void> | undefined;
  /** After a failed rotation, the next waits until the segment grew this far (no retry per flush). */
  private retryAtBytes = 0;
  /**
   * Outages ended (see `restate`), and how many of them a rotation begun after their end has restated; after
   * a failed one, the next waits until the segment grew by a snapshot's size (the room it needs).
   */
  private outages = 0;
  private restated = 0;
  private restateAtBytes = 0;
  /**
   * A file not this gateway's is at the next segment's name (`RotationBlocked`, said once): no rotation is
   * begun (but a relocation's, numbered past it) until the once-a-second look finds it gone.
   */
  private inTheWay: string | undefined;
  /** Why the file in the way kept the rotation from naming its segment (said again at an outage's end). */
  private inTheWayCause: unknown;
  private closing = false;
  private readonly now: () => number;
  /** The timer of the next look when no flush looks first (`lookLater`). */
  private lookTimer: unknown;
  /** When a flush last looked whether the segment's path still names its file (`SEGMENT_CHECK_MS`). */
  private checkedAt: number;
  /** The segment's path lost its file: a rotation into the recreated directory is due or under way. */
  private relocation: Relocation | undefined;
  /** The last relocation failed: the writer rejects what it makes durable until one succeeds. */
  private lost = false;
  /**
   * What stood in the state directory's place (`inPlaceOf`) when a failed relocation was last said: the tries after
   * it, each second, are said again (the segment's loss and the failure) only once one fails with another thing there.
   */
  private lostSaidAt: string | undefined;
  /**
   * Another gateway took the state directory over (`StateDirTakenOver`): for good. That gateway replayed this
   * journal and removes its segments as it rotates, so this one never relocates nor retakes the lock, even
   * once the other released it (what this one holds is out of date: the next start replays the other's).
   */
  private takenOver = false;
  /**
   * Taken over: what every batch waits for from then on, rejected with the `StateDirTakenOver` (its requests
   * are answered 503), batches already written included: the file may be one the other gateway removed.
   */
  private refusal: Promise<void> | undefined;
  /** The state directory this journal writes in (`dirIdentity`): the one opened, or the one a relocation made. */
  private dirId: string | undefined;
  /** The journal's id (`identity.ts`): named by every segment's snapshot, kept in `journal.id`. */
  private readonly id: string;
  readonly opened: JournalOpened;

  constructor(
    private readonly options: JournalOptions,
    restore: (records: readonly unknown[]) => void,
    private readonly snapshot: () => Iterable<unknown>,
  ) {
    ensureJournalDir(options.dir);
    this.dirId = dirIdentity(options.dir);
    // Another gateway took the directory over (this one was paused or hung past the bound a gateway of another
    // PID namespace waits): it replayed this journal and writes it, so this one accepts nothing from now on.
    this.lock = lockStateDir(options.dir, (err) => this.takeOver(err));
    this.fs = options.fs ?? nodeJournalFs;
    this.now = options.now ?? Date.now;
    this.checkedAt = this.now();
    try {
      removeTempSegments(options.dir);
      const read = readJournal(
        options.dir,
        options.understood === undefined ? {} : { understood: options.understood },
      );
      for (const problem of read.problems) options.onProblem?.(problem);
      restore(read.records);
      this.opened = { records: read.records.length, segments: read.segments.length, bytes: read.bytes };
      // Numbered past every entry at a segment's name, those set aside included.
      this.segment = (read.segments.at(-1) ?? 0) + 1;
      // A journal an earlier version of svc wrote (no id in it) adopts one now, before a segment names it. One
      // found in another state directory (restored, moved, remounted, or copied) keeps its id: a new one written
      // before a segment names it would, after a crash between the two, make every segment another journal's
      // (and overlayfs gives a directory another device at each mount).
      this.id = read.id === undefined ? newJournalId() : read.id;
      if (!read.idStored) writeJournalId(options.dir, this.id, read.idKeptAs);
      trimGrownSpace(options.dir, read.zerosFrom);
      const first = encodeSnapshot(this.id, this.segment, snapshot());
      const fd = startSegmentSync(
        options.dir,
        this.segment,
        first,
        read.segments,
        read.keep,
        ({ file, keptAs, err }) =>
          options.onProblem?.({
            file,
            problem: `could not be set aside as ${keptAs} (${(err as Error).message}): it is left where it is, and each start tries again — move it out of ${options.dir}`,
          }),
      );
      this.fd = fd;
      this.closeCurrent = () => closeRawFd(fd);
      this.snapshotBytes = first.length;
      this.writer = new GroupCommitWriter(fd, {
        fs: this.fs,
        onFlushed: (data) => this.flushed(data),
        onRecovered: () => this.restate(),
        beforeFlush: () => this.look(),
        ...(options.onError === undefined ? {} : { onError: options.onError }),
      });
      this.writer.useFile(fd, first.length);
      this.lookLater();
    } catch (err) {
      this.lock.release();
      throw err;
    }
  }

  append(record: unknown): void {
    this.writer.append(record);
  }

  /** `append` of a record given as its JSON text (what `JSON.stringify` makes of it). */
  appendText(text: string): void {
    this.writer.appendText(text);
  }

  /** Resolves once every record appended so far is durable (fdatasync); undefined when it already is. */
  durable(): Promise<void> | undefined {
    return this.writer.durable();
  }

  /** Whether appends are being made durable (see `GroupCommitWriter.accepting`). */
  accepting(): boolean {
    return this.writer.accepting() && !this.lost && !this.takenOver;
  }

  /** Whether another gateway took the state directory over (`StateDirTakenOver`): so it stays until closed. */
  isTakenOver(): boolean {
    return this.takenOver;
  }

  /** The current segment's number and size (tests, bench). */
  currentSegment(): { n: number; bytes: number } {
    return { n: this.segment, bytes: this.writer.fileBytes() };
  }

  /** Resolves once no rotation is under way (tests, bench). */
  async rotated(): Promise<void> {
    await this.rotating;
  }

  async close(): Promise<void> {
    this.closing = true;
    (this.options.timers ?? UNREF_TIMERS).clearTimeout(this.lookTimer);
    await this.rotating;
    // Due but not begun: the requests it held are answered 503 (their records are not where a start reads).
    this.relocation?.refuse(new Error("the gateway stopped before the journal was recreated"));
    this.relocation = undefined;
    await this.writer.close();
    await this.closeCurrent();
    this.lock.release();
  }

  private flushed(data: Buffer): void {
    if (this.rotation !== undefined) {
      this.rotation.flushed(data);
      return;
    }
    if (this.rotating !== undefined || this.closing || this.inTheWay !== undefined) return;
    const bytes = this.writer.fileBytes();
    const limit = this.limit();
    if (
      (this.restated < this.outages && bytes >= this.restateAtBytes) ||
      (bytes > limit && bytes >= this.retryAtBytes)
    )
      this.startRotation(limit);
  }

  /**
   * Another gateway took the state directory over: said once, and so it stays until the journal is closed.
   * Nothing is written from now on (the other gateway reads and rotates these segments), and every batch,
   * waiting or in flight, is rejected: the requests waiting for it and every later one are answered 503.
   */
  private takeOver(err: StateDirTakenOver): void {
    if (this.takenOver) return;
    this.takenOver = true;
    this.writer.fail(err);
    const refusal = Promise.reject(err);
    // Rejected with nobody holding a batch on it: no unhandled rejection.
    refusal.catch(() => {});
    this.refusal = refusal;
    this.writer.hold(refusal);
    this.options.onError?.(err);
  }

  /**
   * Whether another gateway took the state directory over, looked at now (the heartbeat looks only every
   * HEARTBEAT_MS, and a gateway resumed after a pause looks at its segment first): the lock names it, or,
   * with `moved` (this journal's segment is gone), the lock is gone from the directory this journal writes
   * in and a segment numbered past this one's is there — that gateway replayed this journal, rotated it
   * (removing this one's segment) and stopped since. A directory removed or moved away (another at its path,
   * or none) is not: it is made again. Said once (`StateDirTakenOver`).
   */
  private foundTakenOver(moved: boolean): boolean {
    if (this.takenOver) return true;
    const lock = this.lock.now();
    if (typeof lock === "object") {
      this.takeOver(new StateDirTakenOver(this.options.dir, lock.by));
      return true;
    }
    if (!moved || lock !== "gone" || dirIdentity(this.options.dir) !== this.dirId) return false;
    const past = listSegments(this.options.dir).find((n) => n > this.segment);
    if (past === undefined) return false;
    this.takeOver(
      new StateDirTakenOver(this.options.dir, undefined, join(this.options.dir, segmentName(past))),
    );
    return true;
  }

  /**
   * `foundTakenOver`, also when the other gateway has released the lock since: asked whether this journal's
   * segment is gone (`look` asks so too), so a gateway that took the directory over and stopped while this
   * one was paused is found by the segment it left, numbered past this one's.
   */
  private foundTakenOverSince(): boolean {
    if (this.takenOver) return true;
    return this.foundTakenOver(pathMovedFrom(join(this.options.dir, segmentName(this.segment)), this.fd));
  }

  /**
   * At most once a second (as a batch is about to be written, and on a timer when none is): whether another
   * gateway took the state directory over (`foundTakenOver`), and whether the current segment's path still
   * names the file written. Removed (`rm -rf state/`) or moved away, what is synced there is not where a
   * start reads: the batches are held from now on, the directory is recreated and a new segment restates
   * what is live (every record accepted meanwhile is in it), then they are released.
   */
  private look(): void {
    const now = this.now();
    // A wall clock stepped back (NTP, a VM resumed) looks at once, not when it has caught up again.
    if (now - this.checkedAt < SEGMENT_CHECK_MS && now >= this.checkedAt) return;
    this.checkedAt = now;
    if (this.relocation !== undefined || this.closing || this.takenOver) return;
    // Taken over (looked at first: a resumed gateway's look comes before its heartbeat): the segment the other
    // gateway removed is not this one's to make again, nor is the lock it released this one's to take.
    if (this.foundTakenOver(false)) return;
    this.lookInTheWay();
    const file = join(this.options.dir, segmentName(this.segment));
    if (!pathMovedFrom(file, this.fd)) {
      if (!this.lost) return;
      // Lost, and the directory it writes in is back (moved back, or what stood in its place removed and the
      // directory put back): its segment and its lock are still this gateway's, so nothing is relocated.
      if (this.backInPlace()) return;
      // Its lock gone meanwhile (or the name a link of the segment in another directory): relocated as below,
      // which looks first whether another gateway took the directory over.
    } else if (this.foundTakenOver(true)) return;
    const relocation = newRelocation();
    this.relocation = relocation;
    this.writer.hold(relocation.held);
    // Tried again each second while the directory cannot be made: the loss was said with the first failure.
    if (!this.lost) this.saySegmentLost();
    // One under way writes where the segment was: this one starts when it ends.
    if (this.rotating === undefined) this.startRotation(this.limit());
  }

  /**
   * After a failed relocation (`lost`), the segment's path names the file written again: when `LOCK` still names
   * this gateway in the directory this journal writes in, the loss ends (said once, `onWrittenAgain`) and batches
   * are accepted again, in that segment, which holds every batch written meanwhile (the refused ones too, with
   * their refusal). False when the lock is not this gateway's (another one's was found by the look already).
   */
  private backInPlace(): boolean {
    if (this.lock.now() !== "held" || dirIdentity(this.options.dir) !== this.dirId) return false;
    this.lost = false;
    this.lostSaidAt = undefined;
    this.writer.hold(this.refusal);
    this.options.onWrittenAgain?.(join(this.options.dir, segmentName(this.segment)));
    return true;
  }

  /** The current segment's path no longer names its file: what is done about it, and what not to do. */
  private saySegmentLost(): void {
    this.options.onProblem?.({
      file: join(this.options.dir, segmentName(this.segment)),
      problem: `no longer names the file the gateway writes (removed or moved away while the gateway ran, alone or with the state directory); what is live (unfinished runs, pending groups, delivery ids) is written to a new segment in ${this.options.dir}, and the requests waiting are answered once it is durable — stop the gateway before touching its state directory`,
    });
  }

  /**
   * A file that kept the last rotation from naming its segment (`RotationBlocked`) moved away: the next flush
   * rotates (or restates) at once, as due, without waiting for the segment to grow further.
   */
  private lookInTheWay(): void {
    // The entry itself, not what it leads to: a symbolic link to nothing is still in the way (the link fails).
    if (this.inTheWay === undefined || entryMaybeThere(this.inTheWay)) return;
    this.inTheWay = undefined;
    this.retryAtBytes = 0;
    this.restateAtBytes = 0;
  }

  /**
   * The look once a second whether a batch is written or not: a gateway whose runs wait behind a long
   * one, or whose groups are open, writes nothing for minutes, and what it holds would be lost with a
   * crash all that while.
   */
  private lookLater(): void {
    this.lookTimer = (this.options.timers ?? UNREF_TIMERS).setTimeout(() => {
      if (this.closing) return;
      this.look();
      this.lookLater();
    }, SEGMENT_CHECK_MS);
  }

  private limit(): number {
    return Math.max(this.options.maxSegmentBytes ?? DEFAULT_MAX_SEGMENT_BYTES, 2 * this.snapshotBytes);
  }

  /**
   * The end of an outage (a write or sync failed, and one succeeded since): what was appended meanwhile
   * and not written (a run's finish, a group's firing, a direct delivery made) is in the live state only,
   * so a restart would run that run or group again. A new segment restates the live state.
   */
  private restate(): void {
    this.outages += 1;
    this.restateAtBytes = 0;
    // One under way may have read the live state before the outage: the next one starts when it ends (a file
    // in the way of the next segment: once it is moved away).
    if (this.rotating === undefined && !this.closing && this.inTheWay === undefined)
      this.startRotation(this.limit());
    // A file in the way holds the restatement back: said again, now with what that holds back, once per outage.
    else if (this.inTheWay !== undefined && !this.closing)
      this.options.onError?.(
        new RotationBlocked(this.inTheWayCause, this.inTheWay, this.writer.fileBytes(), true),
      );
  }

  private startRotation(limit: number): void {
    // Begun after the outages so far ended, it restates what they lost.
    const outages = this.outages;
    const restating = this.restated < outages;
    const relocation = this.relocation;
    // A try again after a failed one (`lost`), said only when it fails with another thing in the directory's place.
    const retry = this.lost;
    this.rotating = this.rotateInto(relocation)
      .then(() => {
        this.retryAtBytes = 0;
        this.inTheWay = undefined;
        this.restated = outages;
        if (relocation !== undefined) {
          this.lost = false;
          this.lostSaidAt = undefined;
          this.relocation = undefined;
          // Taken over while it ended: the batches stay refused.
          this.writer.hold(this.refusal);
          relocation.release();
        }
      })
      .catch((err: unknown) => {
        if (relocation !== undefined) {
          // The batches held are answered 503, and later ones until a relocation succeeds (tried at the next look).
          this.lost = true;
          this.relocation = undefined;
          relocation.refuse(err);
          // Taken over meanwhile: said once already (StateDirTakenOver), not as a directory not made again. A
          // try again with the same thing in the directory's place was said already.
          if (this.takenOver) return;
          const inPlace = inPlaceOf(this.options.dir);
          if (retry && inPlace === this.lostSaidAt) return;
          this.lostSaidAt = inPlace;
          if (retry) this.saySegmentLost();
          this.options.onError?.(new JournalNotRecreated(err, this.options.dir));
          return;
        }
        if (restating) this.restateAtBytes = this.writer.fileBytes() + this.snapshotBytes;
        else this.retryAtBytes = this.writer.fileBytes() + limit / 4;
        // Failed because another gateway took the state directory over (its start removed the temp file, or
        // its segment has the name), holding the lock or having released it since: said once already, or
        // now (StateDirTakenOver), not as a failed rotation.
        if (err instanceof RotationStopped || this.foundTakenOverSince()) return;
        // No other gateway's trace: a file put there (by hand, a restore, a sync tool) that is not this
        // gateway's. Never numbered past (that is how a takeover is found): said once, and the rotation waits
        // until the look finds it moved away.
        if (err instanceof SegmentNameTaken) {
          if (this.inTheWay === err.file) return;
          this.inTheWay = err.file;
          this.inTheWayCause = err.cause;
          this.options.onError?.(
            new RotationBlocked(err.cause, err.file, this.writer.fileBytes(), restating),
          );
          return;
        }
        this.options.onError?.(restating ? new RestateFailed(err) : new RotationFailed(err));
      })
      .finally(() => {
        this.rotation = undefined;
        this.rotating = undefined;
        if (this.closing) return;
        // The segment's path lost its file while it ran: the relocation starts now.
        if (this.relocation !== undefined) this.startRotation(this.limit());
        // An outage that ended while it ran: restated now (after a failed restatement, once there is room).
        else if (
          this.restated < this.outages &&
          this.inTheWay === undefined &&
          this.writer.fileBytes() >= this.restateAtBytes
        )
          this.startRotation(this.limit());
      });
  }

  /**
   * A rotation; for a relocation, into the state directory made again (and locked again) first, numbered
   * past any segment found there. `this.rotation` is set before the first await: the batches flushed from
   * then on are copied behind its snapshot.
   */
  private async rotateInto(relocation: Relocation | undefined): Promise<void> {
    let n = this.segment + 1;
    if (relocation !== undefined) {
      // Taken over while it was due: the lock is never taken again (the other gateway holds or held it).
      if (this.foundTakenOver(true)) throw new Error("another gateway took the state directory over");
      ensureJournalDir(this.options.dir);
      try {
        this.lock.retake();
      } catch (err) {
        // Another gateway took the lock since the look above (one started meanwhile): said as taken over.
        this.foundTakenOver(true);
        throw err;
      }
      this.dirId = dirIdentity(this.options.dir);
      // Removed with the directory (or never there): the next start finds this journal's id all the same.
      const stored = readJournalId(this.options.dir);
      const keptAs = idKeptAs(this.now());
      const file = join(this.options.dir, JOURNAL_ID_FILE);
      const problem =
        stored.notAFile === true
          ? describeIdNotAFile(file, keptAs, `the journal's id (${this.id})`)
          : undefined;
      if (stored.id !== this.id) writeJournalId(this.options.dir, this.id, keptAs);
      if (problem !== undefined) this.options.onProblem?.({ file, problem });
      n = Math.max(this.segment, ...listSegments(this.options.dir)) + 1;
    }
    const rotation = new SegmentRotation(this.options.dir, n, this.id, this.snapshot(), this.fs);
    this.rotation = rotation;
    await this.rotate(rotation);
  }

  private async rotate(rotation: SegmentRotation): Promise<void> {
    // Taken over (looked at after the snapshot and again just before the new segment is named), the lock held
    // or released since: the other gateway replayed this journal and wrote its own segments, one of them
    // under this rotation's number, maybe (the commit never names its file in place of one there).
    const takenOver = () => this.foundTakenOverSince();
    try {
      await rotation.build(() => this.closing || this.takenOver);
      if (takenOver()) throw new RotationStopped();
    } catch (err) {
      // Only the temp file exists: what cleaning it up might leave, the next start removes.
      await rotation.discard(closeRawFd).catch(() => {});
      throw err;
    }
    const old = this.segment;
    let closeOld: () => Promise<void> = async () => {};
    await this.writer.exclusive(async () => {
      let built: SegmentBuilt;
      try {
        built = await rotation.commit(takenOver);
      } catch (err) {
        // Cleaned up before the writer takes appends again: the new segment may have its name already.
        await rotation.discard(closeRawFd).catch((cleanup: unknown) => {
          // Taken over: the writer refuses every batch already, and the segment is the other gateway's concern.
          if (takenOver()) return;
          const left = new RotationLeftSegment(cleanup, rotation.segmentPath);
          this.writer.fail(left);
          this.options.onError?.(left);
        });
        throw err;
      }
      this.writer.useFile(built.fd, built.bytes);
      this.fd = built.fd;
      this.snapshotBytes = built.snapshotBytes;
      this.segment = rotation.n;
      closeOld = this.closeCurrent;
      this.closeCurrent = () => closeRawFd(built.fd);
      // Batches flushed from here on are in the new segment already.
      this.rotation = undefined;
    });
    const file = join(this.options.dir, segmentName(old));
    try {
      await closeOld();
      await rm(file, { force: true });
    } catch (err) {
      this.options.onError?.(new PreviousSegmentLeft(err, file));
    }
  }
}
