import type { Stats } from "node:fs";

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
