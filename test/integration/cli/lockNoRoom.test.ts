import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { SVC_ARGV } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig } from "./svc.js";

/**
 * A disk with no room left refuses the few bytes of a store's lock file before the store itself is
 * written: the command said only `svc: EFBIG: file too large, write` (or ENOSPC), not which file, and
 * left the lock's `<file>.lock.<pid>.<hex>.new` behind for good.
 */

let home: TempHome;
afterEach(() => home?.cleanup());

/** `svc <args>` whose files may not grow at all (`ulimit -f 0`: every write to a file fails, EFBIG). */
function svcWithoutRoom(args: readonly string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(
    "bash",
    ["-c", 'ulimit -f 0 && exec "$@"', "bash", process.execPath, ...SVC_ARGV, ...args],
    {
      env: { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const stopper = setTimeout(() => child.kill("SIGKILL"), 30_000);
  return new Promise((resolve) =>
    child.on("exit", (code) => {
      clearTimeout(stopper);
      resolve({ code, stderr });
    }),
  );
}

const CONFIG = `${stringify(cliConfig())}`;

describe("a store's lock file that the disk has no room for", { timeout: 60_000 }, () => {
  it("svc webhook subscribe names the store, says the file is unchanged and leaves nothing behind", async () => {
    home = tempHome();
    home.write("config.yaml", CONFIG, 0o600);
    const store = home.write("webhook_subscriptions.json", '{"kept": {"secret": "s"}}\n', 0o600);
    const { code, stderr } = await svcWithoutRoom(["webhook", "subscribe", "ci"]);
    expect(code).toBe(1);
    expect(stderr).toBe(
      `svc: cannot write ${store}: the file would pass the size limit for files (EFBIG) — the file is unchanged; raise the limit (ulimit -f), then run the command again\n`,
    );
    expect(readFileSync(store, "utf8")).toBe('{"kept": {"secret": "s"}}\n');
    expect(readdirSync(home.dir).sort()).toEqual(["config.yaml", "webhook_subscriptions.json"]);
  });

  it("svc mcp add names config.yaml and leaves nothing behind", async () => {
    home = tempHome();
    const config = home.write("config.yaml", CONFIG, 0o600);
    const { code, stderr } = await svcWithoutRoom(["mcp", "add", "files", "--", "node", "server.js"]);
    expect(code).toBe(1);
    expect(stderr).toBe(
      `svc: cannot write ${config}: the file would pass the size limit for files (EFBIG) — the file is unchanged; raise the limit (ulimit -f), then run the command again\n`,
    );
    expect(readFileSync(config, "utf8")).toBe(CONFIG);
    expect(readdirSync(home.dir)).toEqual(["config.yaml"]);
  });

  it("svc cron create names the cron store and leaves nothing behind in cron/", async () => {
    home = tempHome();
    home.write("config.yaml", CONFIG, 0o600);
    const jobs = home.write("cron/jobs.json", '{"revision": 1, "jobs": {}}\n', 0o600);
    const { code, stderr } = await svcWithoutRoom([
      "cron",
      "create",
      "--name",
      "nightly",
      "--schedule",
      "every 1h",
      "--prompt",
      "hi",
    ]);
    expect(code).toBe(1);
    expect(stderr).toBe(
      `svc: cannot write ${jobs}: the file would pass the size limit for files (EFBIG) — the file is unchanged; raise the limit (ulimit -f), then run the command again\n`,
    );
    expect(readdirSync(join(home.dir, "cron"))).toEqual(["jobs.json"]);
  });

  it("svc gateway run refuses the start and leaves no gateway.pid.<pid>.<hex>.new behind", async () => {
    home = tempHome();
    home.write("config.yaml", CONFIG, 0o600);
    const { code } = await svcWithoutRoom(["gateway", "run", "--port", "0"]);
    expect(code).toBe(1);
    expect(readdirSync(home.dir).filter((name) => name.startsWith("gateway.pid"))).toEqual([]);
  });
});
