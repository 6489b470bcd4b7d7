import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AS_ROOT, OTHER_USER, svcAsUser } from "../../helpers/svcAsUser.js";

/**
 * An SVC_HOME not made yet under a directory this user may not write (a container's root-owned /home, a
 * systemd unit's HOME under /var/lib made by root): `svc config check` said ok, and the gateway then
 * failed at start on the bare `EACCES … mkdir`. Both now name the directory and what to do.
 */

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) {
    chmodSync(dir, 0o700);
    rmSync(dir, { recursive: true, force: true });
  }
});

describe("an SVC_HOME whose parent this user cannot write", { timeout: 30_000 }, () => {
  it("svc config check refuses it, naming the parent and the commands that fix it", async () => {
    const top = mkdtempSync(join(tmpdir(), "svc-test-"));
    dirs.push(top);
    // Owned by root (or by the suite's user) and closed to writing: the command's user cannot make SVC_HOME in it.
    const parent = join(top, "var-lib");
    mkdirSync(parent);
    if (AS_ROOT) chownSync(top, OTHER_USER, OTHER_USER);
    chmodSync(parent, 0o555);
    const home = join(parent, "svc", "home");
    const { code, stderr } = await svcAsUser(home, ["config", "check"]);
    expect(code).toBe(1);
    expect(stderr).toContain(`${home}: SVC_HOME does not exist and cannot be made: this user (`);
    expect(stderr).toContain(
      `) may not create directories in ${parent} (EACCES) — create it as a user who can and give it to this one (mkdir -p ${home} && chown `,
    );
    expect(stderr).toContain("or set SVC_HOME to a directory this user can write");
    expect(stderr).not.toMatch(/\n\s+at /);
  });
});
