import {
  close as closeFd,
  fdatasync,
  fsync,
  ftruncate,
  link as linkFile,
  open as openFd,
  rename as renameFile,
  unlink as unlinkFile,
  writeSync,
} from "node:fs";

/**
 * The file calls the journal makes after it opened: appends and syncs on the hot path, and the steps of a
 * rotation. Tests wrap them to count calls, hold one, fail one, or copy the directory after each (a crash
 * image).
 */
export interface JournalFs {
  /**
   * Writes all of `data` at byte `position`: the records' end, or (zeros) the space the segment grows into
   * ahead of them (`GroupCommitWriter`).
   */
  write(fd: number, data: Buffer, position: number): Promise<void>;
  /**
   * Grows the file from byte `from` by `bytes` zero bytes: the space the next records are written into, so
   * that their syncs neither change the file's size nor allocate its blocks.
   */
  grow(fd: number, from: number, bytes: number): Promise<void>;
  fdatasync(fd: number): Promise<void>;
  /** Cuts the file back to `length` bytes (what a failed write left past the last whole batch, and the space ahead). */
  truncate(fd: number, length: number): Promise<void>;
  /**
   * Gives the file at `from` the name `to` as well; fails (EEXIST) when `to` names a file already, which it
   * never replaces: how a rotation gives its new segment its name.
   */
  link(from: string, to: string): Promise<void>;
  /** Removes the name `path` (a file linked under another name stays there). */
  unlink(path: string): Promise<void>;
  /** Renames `from` to `to`, replacing a file there: a rotation's, where the file system has no hard links. */
  rename(from: string, to: string): Promise<void>;
  /** Makes the directory's entries (a created or renamed file) durable. */
  syncDir(dir: string): Promise<void>;
}

let zeros: Buffer | undefined;
/** Zero bytes to write from, made at the first growth (at most 1 MiB, kept). */
function zeroBytes(bytes: number): Buffer {
  zeros ??= Buffer.alloc(1024 * 1024);
  return bytes < zeros.length ? zeros.subarray(0, bytes) : zeros;
}

const settle =
  (resolve: () => void, reject: (err: Error) => void) =>
  (err: Error | null): void =>
    err ? reject(err) : resolve();

/**
 * The write is synchronous: it only copies the batch into the page cache (a few µs for one turn's records),
 * while an asynchronous `fs.write` costs a thread-pool hand-off and a wake-up of the loop per flush (~3 % of
 * the accepted path's CPU in the profile, `bench/PROFILE.md`). The syncs, which wait for the disk, stay on
 * the libuv thread pool: the event loop never waits for the disk.
 */
export const nodeJournalFs: JournalFs = {
  async write(fd, data, position) {
    // writeSync may write less than asked (rare for regular files): loop until all of it is out.
    let written = 0;
    while (written < data.length)
      written += writeSync(fd, data, written, data.length - written, position + written);
  },
  async grow(fd, from, bytes) {
    const zeros = zeroBytes(bytes);
    for (let at = 0; at < bytes; at += zeros.length)
      await nodeJournalFs.write(fd, zeros.subarray(0, Math.min(zeros.length, bytes - at)), from + at);
  },
  fdatasync: (fd) =>
    new Promise((resolve, reject) => {
      fdatasync(fd, settle(resolve, reject));
    }),
  truncate: (fd, length) =>
    new Promise((resolve, reject) => {
      ftruncate(fd, length, settle(resolve, reject));
    }),
  link: (from, to) =>
    new Promise((resolve, reject) => {
      linkFile(from, to, settle(resolve, reject));
    }),
  unlink: (path) =>
    new Promise((resolve, reject) => {
      unlinkFile(path, settle(resolve, reject));
    }),
  rename: (from, to) =>
    new Promise((resolve, reject) => {
      renameFile(from, to, settle(resolve, reject));
    }),
  syncDir: (dir) =>
    new Promise((resolve, reject) => {
      openFd(dir, "r", (err, fd) => {
        if (err) return reject(err);
        fsync(fd, (syncErr) => closeFd(fd, () => (syncErr ? reject(syncErr) : resolve())));
      });
    }),
};
