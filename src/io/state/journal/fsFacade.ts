import { fdatasync, writeSync } from "node:fs";

/** The two asynchronous calls the journal's hot path makes; tests count them through a wrapper. */
export interface JournalFs {
  /** Writes all of `data` at the file's current end (the file is opened for appending). */
  write(fd: number, data: Buffer): Promise<void>;
  fdatasync(fd: number): Promise<void>;
}

/**
 * The write is synchronous: it only copies the batch into the page cache (a few µs for one turn's records),
 * while an asynchronous `fs.write` costs a thread-pool hand-off and a wake-up of the loop per flush (~3 % of
 * the accepted path's CPU in the profile, `bench/PROFILE.md`). The `fdatasync`, which waits for the disk,
 * stays on the libuv thread pool: the event loop never waits for the disk.
 */
export const nodeJournalFs: JournalFs = {
  async write(fd, data) {
    // writeSync may write less than asked (rare for regular files): loop until all of it is out.
    let rest = data;
    while (rest.length > 0) rest = rest.subarray(writeSync(fd, rest));
  },
  fdatasync: (fd) =>
    new Promise((resolve, reject) => {
      fdatasync(fd, (err) => (err ? reject(err) : resolve()));
    }),
};
