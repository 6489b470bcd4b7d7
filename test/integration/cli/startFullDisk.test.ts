import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import type { TempHome } from "../../helpers/home.js";
import { CAN_MOUNT, mountSmallDisk, unmountSmallDisks } from "../../helpers/smallDisk.js";
import { cliConfig, svcProcess } from "./svc.js";

/**
 * `svc gateway start` on a full disk: the gateway it started refused (`SVC_HOME cannot be written (ENOSPC …)`)
 * on its stderr, which goes to logs/gateway.out, which the full disk could not take; the command said only
 * `the gateway exited (code 1) before it answered /health:` and an empty line, pointing at an empty file.
 */

afterEach(unmountSmallDisks);

/** SVC_HOME on a tmpfs (mounting one takes root) with its config.yaml and logs/, then filled up. */
function fullHome(): TempHome {
  const disk = mountSmallDisk("svc-start-full-");
  const dir = disk.dir;
  const home = join(dir, "home");
  mkdirSync(join(home, "logs"), { recursive: true, mode: 0o700 });
  writeFileSync(join(home, "config.yaml"), stringify(cliConfig({ r: { secret: "INSECURE_NO_AUTH" } })));
  disk.fill();
  return { dir: home, write: () => "", cleanup: () => {} };
}

describe.runIf(CAN_MOUNT)("svc gateway start on a full disk", { timeout: 60_000 }, () => {
  it("says that the gateway's output could not be kept, and why, instead of an empty reason", async () => {
    const home = fullHome();
    const res = await svcProcess(home, ["gateway", "start"]);
    expect(res.code).toBe(1);
    const out = join(home.dir, "logs", "gateway.out");
    expect(res.stderr).toBe(
      `svc: the gateway exited (code 1) before it answered /health, and its output could not be kept in ${out}: the disk is full (ENOSPC) — free some space; svc gateway run shows that output in the terminal\n`,
    );
  });
});
