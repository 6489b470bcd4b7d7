import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, svcEach } from "./svc.js";

/**
 * A directory where a store file goes (a `mkdir -p` of the wrong path, a restore that made one) was named as
 * `cannot be read (EISDIR: illegal operation on a directory, read)`, with nothing to do about it.
 */

let home: TempHome;
afterEach(() => home.cleanup());

const fix = "it is a directory: move it away (svc keeps this store in a file of that name)";

describe("a directory in a store file's place", { timeout: 60_000 }, () => {
  it("svc webhook list, svc webhook subscribe and svc cron list name the file and what to do (exit 1)", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig({})));
    const subscriptions = join(home.dir, "webhook_subscriptions.json");
    const jobs = join(home.dir, "cron", "jobs.json");
    mkdirSync(subscriptions);
    mkdirSync(jobs, { recursive: true });
    const [list, subscribe, cron] = await svcEach(home, [
      ["webhook", "list"],
      ["webhook", "subscribe", "gh"],
      ["cron", "list"],
    ]);
    for (const [result, file] of [
      [list, subscriptions],
      [subscribe, subscriptions],
      [cron, jobs],
    ] as const)
      expect(result).toMatchObject({
        code: 1,
        stderr: `svc: ${file}: cannot be read (EISDIR: illegal operation on a directory, read) — ${fix}\n`,
      });
  });
});
