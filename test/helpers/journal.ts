import { copyFileSync, fstatSync, mkdirSync, readdirSync, readFileSync, truncateSync } from "node:fs";
import { join } from "node:path";
import { afterEach } from "vitest";
import { LOCK_FILE } from "../../src/io/state/journal/dirLock.js";
import { type JournalFs, nodeJournalFs } from "../../src/io/state/journal/fsFacade.js";
import { JOURNAL_ID_FILE } from "../../src/io/state/journal/identity.js";
import { Journal } from "../../src/io/state/journal/journal.js";
import { decodeRecords } from "../../src/io/state/journal/records.js";
import type { SegmentProblem } from "../../src/io/state/journal/segments.js";
import { type TempHome, tempHome } from "./home.js";

const homes: TempHome[] = [];
const journals: Journal[] = [];

/** Closes every journal `openJournal` opened and removes every `journalDir` after each test. */
export function cleanUpJournals(): void {
  afterEach(async () => {
    for (const journal of journals.splice(0)) await journal.close().catch(() => {});
    for (const home of homes.splice(0)) home.cleanup();
  });
}

/** A fresh `state` directory under a throwaway home. */
export function journalDir(): string {
  const home = tempHome();
  homes.push(home);
  return join(home.dir, "state");
}

export interface OpenJournalOptions {
  readonly fs?: JournalFs;
  readonly maxSegmentBytes?: number;
  /** What is live (the snapshot restates it): a fixed list, or read afresh at each snapshot. */
  readonly live?: unknown[] | (() => Iterable<unknown>);
  readonly problems?: SegmentProblem[];
  readonly errors?: unknown[];
  readonly understood?: (record: unknown) => boolean;
  /** The clock of the journal's once-a-second look at its segment's path. */
  readonly now?: () => number;
}

/** Opens a journal on `path`; `replayed` holds what the open read back. */
export function openJournal(path: string, options: OpenJournalOptions = {}) {
  const replayed: unknown[] = [];
  const live = options.live ?? [];
  const journal = new Journal(
    {
      dir: path,
      ...(options.fs === undefined ? {} : { fs: options.fs }),
      ...(options.maxSegmentBytes === undefined ? {} : { maxSegmentBytes: options.maxSegmentBytes }),
      ...(options.understood === undefined ? {} : { understood: options.understood }),
      ...(options.now === undefined ? {} : { now: options.now }),
      onProblem: (problem) => options.problems?.push(problem),
      onError: (err) => options.errors?.push(err),
    },
    (records) => replayed.push(...records),
    typeof live === "function" ? live : () => [...live],
  );
  journals.push(journal);
  return { journal, replayed };
}

/** The segment files in `path` (not a rotation's temp file). */
export const segmentFiles = (path: string): string[] =>
  readdirSync(path).filter((name) => name.endsWith(".seg"));

/** The files in a state directory `path` but its `LOCK` and `journal.id`: the segments and what is beside them. */
export const journalFiles = (path: string): string[] =>
  readdirSync(path).filter((name) => name !== LOCK_FILE && name !== JOURNAL_ID_FILE);

/** `base` whose writes fail with ENOSPC while `disk.full` is set, as on a full disk. */
export function fillableDisk(base: JournalFs = nodeJournalFs, full = false) {
  const disk = { full };
  const fs: JournalFs = {
    ...base,
    write: (fd, data, position) =>
      disk.full
        ? Promise.reject(new Error("ENOSPC: no space left on device"))
        : nodeJournalFs.write(fd, data, position),
  };
  return { fs, disk };
}

/**
 * `base` on a disk with `disk.room` bytes free, as a nearly full one: a write (zeros a growth writes too)
 * that would take more writes what fits, then fails with ENOSPC; a cut-back gives its bytes back.
 */
export function diskWithRoom(room: number, base: JournalFs = nodeJournalFs) {
  const disk = { room };
  const write = async (fd: number, data: Buffer, position: number): Promise<void> => {
    const size = fstatSync(fd).size;
    const fits = Math.max(0, Math.min(data.length, size + disk.room - position));
    if (fits > 0) await base.write(fd, data.subarray(0, fits), position);
    disk.room -= Math.max(0, position + fits - size);
    if (fits < data.length)
      throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
  };
  const fs: JournalFs = {
    ...base,
    write,
    grow: (fd, from, bytes) => write(fd, Buffer.alloc(bytes), from),
    truncate: async (fd, length) => {
      const size = fstatSync(fd).size;
      await base.truncate(fd, length);
      disk.room += Math.max(0, size - length);
    },
  };
  return { fs, disk };
}

/** Where a segment's records end: the zeros it was grown into ahead of them begin there. */
export function recordsEnd(file: string): number {
  const data = readFileSync(file);
  return data.length - (decodeRecords(data).unused ?? 0);
}

/**
 * Cuts a segment back to its records, as a crash before its first growth leaves it (and as a version of svc
 * that did not grow its segments wrote them); returns its size.
 */
export function cutToRecords(file: string): number {
  const end = recordsEnd(file);
  truncateSync(file, end);
  return end;
}

/** `n` idempotency-key records `<prefix>-0…`, each padded by `pad` characters. */
export const keyed = (prefix: string, n: number, pad = 0) =>
  Array.from({ length: n }, (_, i) => ({
    t: "s",
    k: `${prefix}-${i}`,
    at: i,
    ...(pad > 0 ? { pad: "x".repeat(pad) } : {}),
  }));

export const recordKey = (record: unknown): string => (record as { k: string }).k;

/** Appends `records` and waits until they are durable (as a request waits before its 202). */
export async function appendAll(
  journal: { append(r: unknown): void; durable(): Promise<void> | undefined },
  records: unknown[],
): Promise<void> {
  for (const record of records) journal.append(record);
  await journal.durable();
}

/** Copies `from` to `to`; false when `from` is gone (removed since it was listed). */
function copiedUnlessGone(from: string, to: string): boolean {
  try {
    copyFileSync(from, to);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw err;
  }
}

export interface CrashImage {
  readonly dir: string;
  /** What the test had marked acknowledged when the image was taken. */
  readonly acknowledged: number;
  /** The segments (and a rotation's temp file) copied. */
  readonly files: string[];
  /** Whether the journal's id file was copied beside them (all but every ID_LESS_EVERY-th image). */
  readonly withId: boolean;
}

/**
 * One image in this many is taken without the journal's id file, as a restore that copies only the journal-*
 * files leaves the directory: read as an id-less directory of an earlier version (its id learnt from the latest
 * snapshot). The others hold it, as a crash leaves it.
 */
export const ID_LESS_EVERY = 8;

/**
 * `base` with a copy of the journal's files in `path` taken after every call, done or failed: what a
 * crash at that moment would leave (as far as the page cache goes). The test sets `acknowledged` as its
 * appends become durable; each image records the value it had.
 */
export function crashImages(path: string, base: JournalFs) {
  const images: CrashImage[] = [];
  const state = { acknowledged: 0 };
  const image = () => {
    const copy = join(journalDir(), "image");
    mkdirSync(copy, { recursive: true });
    // The old segment's removal after a rotation is not one of the calls wrapped here: it runs in the thread
    // pool while the next batch is written, and may take a listed file before it is copied. The image then
    // shows the directory after that removal, which a crash there would leave too.
    // The journal's id, written once before the first segment, is left by a crash as well: with it the image
    // is read as a start reads the directory (each segment's snapshot checked against it), not as an id-less
    // directory of an earlier version (whose latest snapshot is read twice, to learn the id, then replayed),
    // which every ID_LESS_EVERY-th image still is.
    const withId = (images.length + 1) % ID_LESS_EVERY !== 0;
    if (withId) copiedUnlessGone(join(path, JOURNAL_ID_FILE), join(copy, JOURNAL_ID_FILE));
    const files: string[] = [];
    for (const name of readdirSync(path)) {
      if (name.startsWith("journal-") && copiedUnlessGone(join(path, name), join(copy, name)))
        files.push(name);
    }
    images.push({ dir: copy, acknowledged: state.acknowledged, files, withId });
  };
  const after =
    <A extends unknown[]>(call: (...args: A) => Promise<void>) =>
    async (...args: A): Promise<void> => {
      try {
        await call(...args);
      } finally {
        image();
      }
    };
  const fs: JournalFs = {
    write: after(base.write),
    grow: after(base.grow),
    fdatasync: after(base.fdatasync),
    truncate: after(base.truncate),
    link: after(base.link),
    unlink: after(base.unlink),
    rename: after(base.rename),
    syncDir: after(base.syncDir),
  };
  return {
    fs,
    images,
    get acknowledged() {
      return state.acknowledged;
    },
    set acknowledged(n: number) {
      state.acknowledged = n;
    },
  };
}
