import type { BigIntStats, Stats } from "node:fs";

/**
 * File timestamps advance in coarse ticks (a few ms on Linux, 2 s on some filesystems): a same-size
 * rewrite in the tick of the last read keeps inode, size, mtime and ctime. While the file is this young its
 * bytes are compared too (git's "racily clean" rule), so such a change is not missed.
 */
export const RACY_WINDOW_MS = 2000;

/**
 * What a file's metadata says of its content: `<inode>:<size>:<mtimeMs>:<ctimeMs>`. The change time too: an
 * edit in place whose mtime is set back (`touch -r`, a tool keeping timestamps) keeps inode, size and mtime,
 * but no one can set its ctime back.
 */
export function fileStamp(st: Stats): string {
  return `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
}

/** Whether the file changed within RACY_WINDOW_MS of `now`: its stamp alone cannot prove it unchanged. */
export function isRacy(st: Stats, now: number = Date.now()): boolean {
  return now - Math.max(st.mtimeMs, st.ctimeMs) < RACY_WINDOW_MS;
}

/**
 * `fileStamp` to the nanosecond, with the device: `<dev>:<inode>:<size>:<mtimeNs>:<ctimeNs>` of a
 * `{ bigint: true }` stat. `mtimeMs` is a float that cannot hold a nanosecond time, so two changes within
 * the same microsecond-ish could share it; and an inode number is only unique on its device.
 */
export function fileIdentity(st: BigIntStats): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
}

/**
 * Whether a file whose bytes were read (or compared) at `readAtMs` could have changed since without its
 * `fileIdentity` changing: it had changed within RACY_WINDOW_MS before then.
 */
export function isRacyAt(st: BigIntStats, readAtMs: number): boolean {
  const readAtNs = BigInt(Math.floor(readAtMs)) * 1_000_000n;
  const windowNs = BigInt(RACY_WINDOW_MS) * 1_000_000n;
  return readAtNs - st.mtimeNs < windowNs || readAtNs - st.ctimeNs < windowNs;
}
