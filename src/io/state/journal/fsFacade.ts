import {
  close as closeFd,
  fdatasync,
  fsync,
  ftruncate,
  open as openFd,
  rename as renameFile,
  writeSync,
} from "node:fs";

/**
 * The file calls the journal makes after it opened: appends and syncs on the hot path, and the steps of a
 * rotation. Tests wrap them to count calls, hold one, fail one, or copy the directory after each (a crash
 * image).
 */
export interface JournalFs {
  /** Writes all of `data` at the file's current end (the file is opened for appending). */
  write(fd: number, data: Buffer): Promise<void>;
  fdatasync(fd: number): Promise<void>;
  /** Cuts the file back to `length` bytes (what a failed write left past the last whole batch). */
  truncate(fd: number, length: number): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  /** Makes the directory's entries (a created or renamed file) durable. */
  syncDir(dir: string): Promise<void>;
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
  async write(fd, data) {
    // writeSync may write less than asked (rare for regular files): loop until all of it is out.
    let rest = data;
    while (rest.length > 0) rest = rest.subarray(writeSync(fd, rest));
  },
  fdatasync: (fd) =>
    new Promise((resolve, reject) => {
      fdatasync(fd, settle(resolve, reject));
    }),
  truncate: (fd, length) =>
    new Promise((resolve, reject) => {
      ftruncate(fd, length, settle(resolve, reject));
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
