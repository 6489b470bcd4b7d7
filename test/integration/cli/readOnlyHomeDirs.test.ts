import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { CAN_MOUNT } from "../../helpers/smallDisk.js";
import { cliConfig, svcProcess } from "./svc.js";

/**
 * An SVC_HOME on a file system that turned read-only after an error (ext4 mounted `errors=remount-ro`)
 * refuses the directory a store goes in (`cron/` of a first job), though `access` still calls it writable.
 * Node 20's recursive mkdir reports that refusal as ENOENT, so the command said only `svc: ENOENT: no such
 * file or directory, mkdir '<home>/cron'`: a missing file, where the disk takes no write.
 */

const mounted: string[] = [];
afterEach(() => {
  for (const dir of mounted.splice(0)) {
    spawnSync("umount", [dir]);
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Whether this machine can turn an ext4 file system read-only by an error (root, mkfs.ext4, the kernel's trigger). */
const CAN_FAIL_EXT4 = CAN_MOUNT && spawnSync("mkfs.ext4", ["-V"]).status === 0 && existsSync("/sys/fs/ext4");

/** SVC_HOME holding its config.yaml on a small ext4 image, then turned read-only as by a disk error. */
function failedExt4Home(): string {
  const dir = mkdtempSync(join(tmpdir(), "svc-ext4-"));
  mounted.push(dir);
  const image = `${dir}.img`;
  spawnSync("truncate", ["-s", "8M", image]);
  const made = spawnSync("mkfs.ext4", ["-q", "-F", image]);
  const mount = spawnSync("mount", ["-o", "loop,errors=remount-ro", image, dir]);
  rmSync(image);
  if (made.status !== 0 || mount.status !== 0) throw new Error(`ext4 image: ${made.stderr}${mount.stderr}`);
  const home = join(dir, "home");
  mkdirSync(home);
  writeFileSync(join(home, "config.yaml"), stringify(cliConfig()), { mode: 0o600 });
  const device = spawnSync("findmnt", ["-n", "-o", "SOURCE", dir], { encoding: "utf8" }).stdout.trim();
  writeFileSync(join("/sys/fs/ext4", basename(device), "trigger_fs_error"), "svc test");
  return home;
}

describe.runIf(CAN_FAIL_EXT4)(
  "a store directory an SVC_HOME turned read-only cannot take",
  { timeout: 60_000 },
  () => {
    it("svc cron create names the cron store and the read-only file system, not a missing file", async () => {
      const home = failedExt4Home();
      const res = await svcProcess({ dir: home, write: () => "", cleanup: () => {} }, [
        "cron",
        "create",
        "--name",
        "nightly",
        "--schedule",
        "every 1h",
        "--prompt",
        "hi",
      ]);
      expect(res.stderr).toBe(
        `svc: cannot write ${join(home, "cron", "jobs.json")}: ${home} is on a read-only file system (EROFS) — the file is unchanged; make it writable (for a link into a read-only place, put a copy of the file in the link's place), then run the command again\n`,
      );
      expect(res.code).toBe(1);
      expect(existsSync(join(home, "cron"))).toBe(false);
    });
  },
);
