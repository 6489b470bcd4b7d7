import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { CAN_MOUNT } from "./smallDisk.js";

/** Whether this machine can turn an ext4 file system read-only by an error (root, mkfs.ext4, the kernel's trigger). */
export const CAN_FAIL_EXT4 =
  CAN_MOUNT && spawnSync("mkfs.ext4", ["-V"]).status === 0 && existsSync("/sys/fs/ext4");

const mounted: string[] = [];

/**
 * A directory on a small ext4 image mounted `errors=remount-ro`, with `files` written in it, then turned
 * read-only as a disk error turns it: every write is refused (EROFS) though `access` still calls it writable.
 */
export function failedExt4Dir(files: Record<string, string> = {}): string {
  const mount = mkdtempSync(join(tmpdir(), "svc-ext4-"));
  mounted.push(mount);
  const image = `${mount}.img`;
  spawnSync("truncate", ["-s", "8M", image]);
  const made = spawnSync("mkfs.ext4", ["-q", "-F", image]);
  const mounting = spawnSync("mount", ["-o", "loop,errors=remount-ro", image, mount]);
  rmSync(image);
  if (made.status !== 0 || mounting.status !== 0)
    throw new Error(`ext4 image: ${made.stderr}${mounting.stderr}`);
  const dir = join(mount, "home");
  mkdirSync(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text, { mode: 0o600 });
  const device = spawnSync("findmnt", ["-n", "-o", "SOURCE", mount], { encoding: "utf8" }).stdout.trim();
  writeFileSync(join("/sys/fs/ext4", basename(device), "trigger_fs_error"), "svc test");
  return dir;
}

/** Unmounts and removes every directory `failedExt4Dir` made (an `afterEach`). */
export function unmountFailedExt4(): void {
  for (const dir of mounted.splice(0)) {
    spawnSync("umount", [dir]);
    rmSync(dir, { recursive: true, force: true });
  }
}
