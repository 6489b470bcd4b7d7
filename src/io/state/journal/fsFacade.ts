import { fdatasync, write } from "node:fs";

/** The two asynchronous calls the journal's hot path makes; tests count them through a wrapper. */
export interface JournalFs {
  /** Writes all of `data` at the file's current end (the file is opened for appending). */
  write(fd: number, data: Buffer): Promise<void>;
  fdatasync(fd: number): Promise<void>;
}

function writeOnce(fd: number, data: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    write(fd, data, 0, data.length, null, (err, written) => (err ? reject(err) : resolve(written)));
  });
}

/** node:fs on the libuv thread pool: the event loop never waits for the disk. */
export const nodeJournalFs: JournalFs = {
  async write(fd, data) {
    let rest = data;
    while (rest.length > 0) rest = rest.subarray(await writeOnce(fd, rest));
  },
  fdatasync: (fd) =>
    new Promise((resolve, reject) => {
      fdatasync(fd, (err) => (err ? reject(err) : resolve()));
    }),
};
