import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { AS_ROOT, OTHER_USER, svcAsUser } from "../../helpers/svcAsUser.js";
import { cliConfig } from "./svc.js";

/**
 * A store file another user owns (made by `sudo svc cron create`, `sudo svc webhook subscribe`, or restored
 * from a backup as root) was refused as `cannot be read (EACCES: permission denied, open '…')`, naming the file
 * but not what to do. It now says, as for config.yaml: give it to the user svc runs as, and chmod 600.
 */

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A home the command's user owns (nobody's when the tests run as root, whom permissions do not stop). */
function ownHome(): string {
  const dir = mkdtempSync(join(tmpdir(), "svc-test-"));
  dirs.push(dir);
  return dir;
}

/** A file the command's user cannot read: root's when the tests run as root, else mode 000. */
function othersFile(path: string, text: string): string {
  writeFileSync(path, text, { mode: 0o600 });
  if (!AS_ROOT) chmodSync(path, 0o000);
  return path;
}

const fix = (file: string) =>
  `make it readable by the user svc runs as (uid ${AS_ROOT ? OTHER_USER : process.getuid?.()}): give it to that user (chown) and chmod 600 ${file}`;

describe("a store file of another user", { timeout: 60_000 }, () => {
  it("svc cron list, svc webhook list and svc mcp logout name the file and what to do", async () => {
    const home = ownHome();
    const config = cliConfig({}, { mcp_servers: { gh: { url: "http://127.0.0.1:9/mcp", auth: "oauth" } } });
    writeFileSync(join(home, "config.yaml"), stringify(config), { mode: 0o600 });
    mkdirSync(join(home, "cron"));
    mkdirSync(join(home, "mcp-tokens"));
    const jobs = othersFile(join(home, "cron", "jobs.json"), '{"revision": 1, "jobs": {}}\n');
    const subscriptions = othersFile(join(home, "webhook_subscriptions.json"), "{}\n");
    const tokens = othersFile(join(home, "mcp-tokens", "gh.json"), '{"access_token": "t"}\n');
    if (AS_ROOT)
      for (const path of [home, join(home, "config.yaml"), join(home, "cron"), join(home, "mcp-tokens")])
        chownSync(path, OTHER_USER, OTHER_USER);

    const [cron, webhook, logout] = await Promise.all([
      svcAsUser(home, ["cron", "list"]),
      svcAsUser(home, ["webhook", "list"]),
      svcAsUser(home, ["mcp", "logout", "gh"]),
    ]);
    expect(cron).toEqual({
      code: 1,
      stderr: `svc: ${jobs}: cannot be read (EACCES: permission denied, open '${jobs}') — ${fix(jobs)}\n`,
    });
    expect(webhook).toEqual({
      code: 1,
      stderr: `svc: ${subscriptions}: cannot be read (EACCES: permission denied, open '${subscriptions}') — ${fix(subscriptions)}\n`,
    });
    expect(logout.code).toBe(1);
    expect(logout.stderr).toContain(
      `${tokens}: cannot be read (EACCES: permission denied, open '${tokens}') — ${fix(tokens)}`,
    );
  });
});
