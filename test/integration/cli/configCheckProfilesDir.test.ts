import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

/**
 * A file where `$SVC_HOME/profiles` goes: the gateway starts, logs `[cron] cannot list the profiles (...)`
 * and runs the default profile's cron jobs only, while `svc config check` said nothing of it.
 */
describe("svc config check and a profiles directory that cannot be listed", () => {
  it("warns as the gateway's scheduler logs it, and still exits 0", async () => {
    home = tempHome();
    home.write("profiles", "not a directory\n");
    const check = await svc(home, ["config", "check"]);
    expect(check.code).toBe(0);
    expect(check.stdout).toMatch(/^ok: /);
    expect(check.stderr).toContain(
      `Warning: cannot list the profiles (ENOTDIR: not a directory, scandir '${join(home.dir, "profiles")}'); running the default profile's jobs only`,
    );
  });
});
