import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import type { TempHome } from "../../helpers/home.js";
import { CAN_MOUNT, mountSmallDisk, unmountSmallDisks } from "../../helpers/smallDisk.js";
import { cliConfig, svcProcess } from "./svc.js";

/**
 * `svc cron run` on a disk that fills up during the run: the job ran and delivered, then recording its
 * last_run failed, and the command exited 1 with 'cannot write …/cron/jobs.json: the disk is full (ENOSPC) —
 * the file is unchanged; free some space, then run the command again' — which runs (and delivers) the job a
 * second time; a run that failed lost its own error to that one.
 */

afterEach(unmountSmallDisks);

/** SVC_HOME on a small tmpfs (mounting one takes root), and how to fill it. */
function smallHome(): { home: TempHome; fill(): void } {
  const disk = mountSmallDisk("svc-cron-full-");
  const dir = disk.dir;
  const home = join(dir, "home");
  mkdirSync(home);
  writeFileSync(join(home, "config.yaml"), stringify(cliConfig()));
  return {
    home: { dir: home, write: () => "", cleanup: () => {} },
    fill: () => {
      disk.fill();
    },
  };
}

describe.runIf(CAN_MOUNT)("svc cron run on a full disk", { timeout: 60_000 }, () => {
  it("runs the job once, says its last_run could not be recorded, and does not ask to run it again", async () => {
    const { home, fill } = smallHome();
    const created = await svcProcess(home, [
      "cron",
      "create",
      "--name",
      "j",
      "--schedule",
      "@daily",
      "--prompt",
      "hi",
    ]);
    expect(created.code).toBe(0);
    // The reply goes to the log target: gateway.log keeps room in the page it has, a new file gets none.
    mkdirSync(join(home.dir, "logs"), { recursive: true });
    writeFileSync(join(home.dir, "logs", "gateway.log"), "\n");
    fill();
    const res = await svcProcess(home, ["cron", "run", "j"]);
    expect(res.stdout).toBe("hi\n");
    expect(res.stderr).toBe(
      `Warning: the run of cron job j ended (ok), but its last_run could not be recorded: cannot write ${join(home.dir, "cron", "jobs.json")}: the disk is full (ENOSPC) — the file is unchanged; free some space (svc cron list shows the last run recorded before)\n`,
    );
    expect(res.code).toBe(0);
  });
});
