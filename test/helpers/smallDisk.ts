import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Whether this process may mount a tmpfs: the tests of a full disk run only as root. */
export const CAN_MOUNT = process.getuid?.() === 0;

/** A small tmpfs of a test's own, and how to fill it up (to `leftPages` pages of 4 KiB) and empty it again. */
export interface SmallDisk {
  readonly dir: string;
  fill(leftPages?: number): void;
  empty(): void;
}

const mounted: string[] = [];

/** Mounts a tmpfs (`options`: `size=1m` unless told) on a new temporary directory named from `prefix`. */
export function mountSmallDisk(prefix: string, options = "size=1m"): SmallDisk {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const mount = spawnSync("mount", ["-t", "tmpfs", "-o", options, "tmpfs", dir]);
  if (mount.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`mount -t tmpfs failed: ${mount.stderr}`);
  }
  mounted.push(dir);
  const filler = join(dir, "filler");
  return {
    dir,
    fill(leftPages = 0) {
      spawnSync("dd", ["if=/dev/zero", `of=${filler}`, "bs=4k"]);
      if (leftPages > 0) spawnSync("truncate", ["-s", `-${leftPages * 4096}`, filler]);
    },
    empty: () => rmSync(filler, { force: true }),
  };
}

/** Unmounts and removes every disk `mountSmallDisk` mounted (an `afterEach`). */
export function unmountSmallDisks(): void {
  for (const dir of mounted.splice(0)) {
    spawnSync("umount", [dir]);
    rmSync(dir, { recursive: true, force: true });
  }
}
