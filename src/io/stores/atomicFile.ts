import { randomBytes } from "node:crypto";
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  realpathSync,
  renameSync,
  rmSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";

/**
 * Writes `data` so that readers see either the old or the new file, never a half-written one:
 * temp file in the same directory, fsync, rename, fsync of the directory.
 */
export function writeFileAtomic(linkOrPath: string, data: string | Uint8Array, mode = 0o600): void {
  // A symlinked file (config.yaml or .env kept in a dotfiles repository) is updated where it lives: a
  // rename over the link would replace it with a copy and leave the real file behind unchanged.
  const path = resolveLink(linkOrPath);
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const temp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  const fd = openSync(temp, "wx", mode);
  try {
    writeSync(fd, typeof data === "string" ? Buffer.from(data) : data);
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    rmSync(temp, { force: true });
    throw err;
  }
  closeSync(fd);
  try {
    renameSync(temp, path);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
  try {
    const dirFd = openSync(dir, "r");
    try {
      fsyncSync(dirFd);
    } finally {
      closeSync(dirFd);
    }
  } catch {
    // Some filesystems refuse fsync on directories; the rename itself is still atomic.
  }
}

function resolveLink(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path; // not there yet (or a dangling link): written as named
  }
}

export function writeJsonAtomic(path: string, value: unknown, mode = 0o600): void {
  writeFileAtomic(path, `${JSON.stringify(value, null, 2)}\n`, mode);
}
