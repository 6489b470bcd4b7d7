import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import type { TempHome } from "../../helpers/home.js";
import { CAN_MOUNT, mountSmallDisk, unmountSmallDisks } from "../../helpers/smallDisk.js";
import { cliConfig, svcProcess } from "./svc.js";

/**
 * `svc config check` with SVC_HOME on a full disk said `ok: …` (exit 0), while `svc gateway run` refused to
 * start (`SVC_HOME cannot be written (ENOSPC …)`) and a running gateway answers every event 503.
 */
afterEach(unmountSmallDisks);

function fullHome(): TempHome {
  const disk = mountSmallDisk("svc-check-full-");
  const dir = disk.dir;
  const home = join(dir, "home");
  mkdirSync(home);
  writeFileSync(join(home, "config.yaml"), stringify(cliConfig({ r: { secret: "INSECURE_NO_AUTH" } })));
  disk.fill();
  return { dir: home, write: () => "", cleanup: () => {} };
}

describe.runIf(CAN_MOUNT)("svc config check on a full disk", { timeout: 60_000 }, () => {
  it("reports the full disk as a reason the gateway would not start", async () => {
    const home = fullHome();
    const res = await svcProcess(home, ["config", "check"]);
    expect(res.code).toBe(1);
    expect(res.stdout + res.stderr).toContain(
      `${home.dir}: the disk SVC_HOME is on is full (no space left for this user) — the gateway cannot write its pid file, log and state there (its start fails): free some space`,
    );
  });
});
