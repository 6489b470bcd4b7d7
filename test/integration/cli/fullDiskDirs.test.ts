import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { CAN_FAIL_EXT4, failedExt4Dir, unmountFailedExt4 } from "../../helpers/failedExt4.js";
import type { TempHome } from "../../helpers/home.js";
import { CAN_MOUNT, mountSmallDisk, unmountSmallDisks } from "../../helpers/smallDisk.js";
import { cliConfig, svcProcess } from "./svc.js";

/**
 * A disk with no room left (here: no inode left, a tmpfs mounted with few) refuses the directory a store
 * goes in (`cron/` of a first job, a new profile's): the command said only `svc: ENOSPC: no space left on
 * device, mkdir '<dir>'`, not which store, unlike a store file the disk has no room for. A file system
 * that turned read-only after an error (ext4 mounted `errors=remount-ro`, which `access` still calls
 * writable) refuses it too, and Node 20's recursive mkdir reports that as ENOENT: the command said
 * `svc: ENOENT: no such file or directory, mkdir '<home>/cron'`, a missing file where the disk takes no write.
 */

afterEach(unmountSmallDisks);
afterEach(unmountFailedExt4);

const CRON_CREATE = ["cron", "create", "--name", "nightly", "--schedule", "every 1h", "--prompt", "hi"];

/** A tmpfs (mounting one takes root) with every inode taken but SVC_HOME's and its config.yaml's. */
function fullHome(): TempHome {
  const disk = mountSmallDisk("svc-full-", "size=1m,nr_inodes=16");
  const dir = disk.dir;
  mkdirSync(join(dir, "home"));
  writeFileSync(join(dir, "home", "config.yaml"), stringify(cliConfig()), { mode: 0o600 });
  for (let i = 0; ; i++) {
    try {
      writeFileSync(join(dir, `filler-${i}`), "");
    } catch {
      break;
    }
  }
  const home = join(dir, "home");
  return {
    dir: home,
    write: (relative, text) => {
      writeFileSync(join(home, relative), text);
      return join(home, relative);
    },
    cleanup: () => {},
  };
}

describe.runIf(CAN_MOUNT)("a store directory the full disk cannot make", { timeout: 60_000 }, () => {
  it("svc cron create names the cron store, as for the store file itself", async () => {
    const home = fullHome();
    const res = await svcProcess(home, CRON_CREATE);
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(
      `svc: cannot write ${join(home.dir, "cron", "jobs.json")}: the disk is full (ENOSPC) — the file is unchanged; free some space, then run the command again\n`,
    );
    expect(existsSync(join(home.dir, "cron"))).toBe(false);
  });
});

describe.runIf(CAN_FAIL_EXT4)(
  "a store directory an SVC_HOME turned read-only cannot take",
  { timeout: 60_000 },
  () => {
    it("svc cron create names the cron store and the read-only file system, not a missing file", async () => {
      const home = failedExt4Dir({ "config.yaml": stringify(cliConfig()) });
      const res = await svcProcess({ dir: home, write: () => "", cleanup: () => {} }, CRON_CREATE);
      expect(res.stderr).toBe(
        `svc: cannot write ${join(home, "cron", "jobs.json")}: ${home} is on a read-only file system (EROFS) — the file is unchanged; make it writable (for a link into a read-only place, put a copy of the file in the link's place), then run the command again\n`,
      );
      expect(res.code).toBe(1);
      expect(existsSync(join(home, "cron"))).toBe(false);
    });
  },
);
