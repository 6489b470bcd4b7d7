import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import type { TempHome } from "../../helpers/home.js";
import { cliConfig, svcProcess } from "./svc.js";

/**
 * `svc config check` with SVC_HOME on a full disk said `ok: …` (exit 0), while `svc gateway run` refused to
 * start (`SVC_HOME cannot be written (ENOSPC …)`) and a running gateway answers every event 503.
 */
let mounted: string | undefined;
afterEach(() => {
  if (mounted === undefined) return;
  spawnSync("umount", [mounted]);
  rmSync(mounted, { recursive: true, force: true });
  mounted = undefined;
});

function fullHome(): TempHome {
  const dir = mkdtempSync(join(tmpdir(), "svc-check-full-"));
  const mount = spawnSync("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", dir]);
  if (mount.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`mount -t tmpfs failed: ${mount.stderr}`);
  }
  mounted = dir;
  const home = join(dir, "home");
  mkdirSync(home);
  writeFileSync(join(home, "config.yaml"), stringify(cliConfig({ r: { secret: "INSECURE_NO_AUTH" } })));
  spawnSync("dd", ["if=/dev/zero", `of=${join(dir, "filler")}`, "bs=4k"]);
  return { dir: home, write: () => "", cleanup: () => {} };
}

describe.runIf(process.getuid?.() === 0)("svc config check on a full disk", { timeout: 60_000 }, () => {
  it("reports the full disk as a reason the gateway would not start", async () => {
    const home = fullHome();
    const res = await svcProcess(home, ["config", "check"]);
    expect(res.code).toBe(1);
    expect(res.stdout + res.stderr).toContain(
      `${home.dir}: the disk SVC_HOME is on is full (no space left for this user) — the gateway cannot write its pid file, log and state there (its start fails): free some space`,
    );
  });
});
