import { chmodSync, chownSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { AS_ROOT, OTHER_USER, ownedTempDirs, svcAsUser } from "../../helpers/svcAsUser.js";
import { cliConfig } from "./svc.js";

/**
 * A store whose directory this user cannot write (a `cron/` made by root, a config.yaml linked into a
 * directory of another user) failed with the bare `EACCES: permission denied, open
 * '<dir>/jobs.json.lock.<pid>.<hex>.new'` — an internal file's name, not the store's, and nothing on what
 * to do. It now names the store and the directory, and says the file is unchanged.
 */

const ownDir = ownedTempDirs();

function ownFile(path: string, text: string): string {
  writeFileSync(path, text, { mode: 0o600 });
  if (AS_ROOT) chownSync(path, OTHER_USER, OTHER_USER);
  return path;
}

const CONFIG = stringify(cliConfig());

describe("a store in a directory this user cannot write", { timeout: 60_000 }, () => {
  it("svc cron create names the cron store and its directory", async () => {
    const home = ownDir("svc-test-");
    ownFile(join(home, "config.yaml"), CONFIG);
    const cron = join(home, "cron");
    mkdirSync(cron);
    const jobs = ownFile(join(cron, "jobs.json"), '{"revision": 1, "jobs": {}}\n');
    if (AS_ROOT) chownSync(cron, OTHER_USER, OTHER_USER);
    chmodSync(cron, 0o555);
    const { code, stderr } = await svcAsUser(home, [
      "cron",
      "create",
      "--name",
      "nightly",
      "--schedule",
      "every 1h",
      "--prompt",
      "hi",
    ]);
    chmodSync(cron, 0o700);
    expect(code).toBe(1);
    expect(stderr).toBe(
      `svc: cannot write ${jobs}: this user may not create files in ${cron} (EACCES) — the file is unchanged; fix that directory's owner or permissions, then run the command again\n`,
    );
    expect(readFileSync(jobs, "utf8")).toBe('{"revision": 1, "jobs": {}}\n');
  });

  it("svc mcp add of a config.yaml linked into a directory it cannot write names the linked file", async () => {
    const home = ownDir("svc-test-");
    const dotfiles = ownDir("svc-dotfiles-");
    const config = ownFile(join(dotfiles, "config.yaml"), CONFIG);
    chmodSync(dotfiles, 0o555);
    symlinkSync(config, join(home, "config.yaml"));
    const { code, stderr } = await svcAsUser(home, ["mcp", "add", "files", "--", "node", "server.js"]);
    chmodSync(dotfiles, 0o700);
    expect(code).toBe(1);
    expect(stderr).toBe(
      `svc: cannot write ${config}: this user may not create files in ${dotfiles} (EACCES) — the file is unchanged; fix that directory's owner or permissions, then run the command again\n`,
    );
    expect(readFileSync(config, "utf8")).toBe(CONFIG);
  });
});
