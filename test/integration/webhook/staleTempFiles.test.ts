import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import type { Gateway } from "../../../src/gateway.js";
import { startGatewayInHome, webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

/**
 * Stores are written atomically (temp file, fsync, rename), so a SIGKILL mid-write leaves the store
 * whole, plus the half-written temp file beside it. The next start removes those of processes that
 * are gone, and leaves a running process's (a CLI command writing now) alone.
 */

let home: TempHome | undefined;
let gateway: Gateway | undefined;
afterEach(async () => {
  await gateway?.stop();
  gateway = undefined;
  home?.cleanup();
});

describe("temp files of atomic writes cut short", () => {
  it("are removed at start when their process is gone; a live process's is kept", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify(webhookConfig({ open: { secret: "INSECURE_NO_AUTH" } }, {}, { agent: { provider: "echo" } })),
    );
    const gone = spawnSync("true").pid;
    const stale = [
      `.webhook-pending-runs.json.${gone}.0123456789ab.tmp`,
      `.webhook-seen-ids.json.${gone}.a1b2c3d4e5f6.tmp`,
      join("cron", `.jobs.json.${gone}.00ff00ff00ff.tmp`),
    ];
    for (const name of stale) home.write(name, '{"version": 1, "ru');
    const live = `.webhook_subscriptions.json.${process.pid}.abcdefabcdef.tmp`;
    home.write(live, "{");
    home.write("notes.tmp", "mine");

    gateway = await startGatewayInHome(home);
    for (const name of stale) expect([name, existsSync(join(home.dir, name))]).toEqual([name, false]);
    expect(existsSync(join(home.dir, live))).toBe(true);
    expect(existsSync(join(home.dir, "notes.tmp"))).toBe(true);
  });
});
