import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, svc } from "./svc.js";

/**
 * A directory where a lock file goes is no lock any process holds or will release. The state directory's
 * `LOCK` was read as a lock released meanwhile, five times over (`its LOCK file keeps changing — is another
 * gateway starting?`); a store's `<file>.lock` was waited for 10 s as another process's, then said to be one.
 */

let home: TempHome;
afterEach(() => home.cleanup());

describe("a directory in a lock file's place", { timeout: 60_000 }, () => {
  it("state/LOCK: the gateway's start is refused at once, naming it and the fix (exit 1)", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig({})));
    const lock = join(home.dir, "state", "LOCK");
    mkdirSync(lock, { recursive: true });
    const run = await svc(home, ["gateway", "run", "--port", "0"], { timeoutMs: 30_000 });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `svc: cannot lock the state directory ${join(home.dir, "state")}: ${lock}: it is a directory: move it away (svc keeps the state directory's lock in a file of that name)\n`,
    );
  });

  it("a store's <file>.lock: the write fails at once, naming it and the fix (exit 1)", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig({})));
    const lock = join(home.dir, "webhook_subscriptions.json.lock");
    mkdirSync(lock);
    const subscribe = await svc(home, ["webhook", "subscribe", "gh"]);
    expect(subscribe).toMatchObject({
      code: 1,
      stderr: `svc: ${lock}: it is a directory: move it away (svc keeps the lock of webhook_subscriptions.json in a file of that name)\n`,
    });
  });
});
