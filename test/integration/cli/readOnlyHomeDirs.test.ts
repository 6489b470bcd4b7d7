import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { CAN_FAIL_EXT4, failedExt4Dir, unmountFailedExt4 } from "../../helpers/failedExt4.js";
import { cliConfig, svcProcess } from "./svc.js";

/**
 * An SVC_HOME on a file system that turned read-only after an error (ext4 mounted `errors=remount-ro`)
 * refuses the directory a store goes in (`cron/` of a first job), though `access` still calls it writable.
 * Node 20's recursive mkdir reports that refusal as ENOENT, so the command said only `svc: ENOENT: no such
 * file or directory, mkdir '<home>/cron'`: a missing file, where the disk takes no write.
 */

afterEach(unmountFailedExt4);

describe.runIf(CAN_FAIL_EXT4)(
  "a store directory an SVC_HOME turned read-only cannot take",
  { timeout: 60_000 },
  () => {
    it("svc cron create names the cron store and the read-only file system, not a missing file", async () => {
      const home = failedExt4Dir({ "config.yaml": stringify(cliConfig()) });
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
