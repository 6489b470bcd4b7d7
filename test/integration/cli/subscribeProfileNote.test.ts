import { symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc, svcEach } from "./svc.js";

describe("svc webhook subscribe --route-profile while multiplexing is off", () => {
  let home: TempHome;
  afterEach(() => home.cleanup());

  it("notes that the binding is not enforced until gateway.multiplex_profiles is on; no note once it is", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(webhookConfig({})));
    const off = await svc(home, ["webhook", "subscribe", "bound", "--route-profile", "work"]);
    expect(off.code).toBe(0);
    expect(off.stderr).toContain("gateway.multiplex_profiles is off");
    expect(off.stderr).toContain("/p/work/webhooks/bound");

    home.write("config.yaml", stringify(webhookConfig({}, {}, { gateway: { multiplex_profiles: true } })));
    const on = await svc(home, ["webhook", "subscribe", "bound2", "--route-profile", "work"]);
    expect(on.code).toBe(0);
    expect(on.stderr).not.toContain("multiplex_profiles is off");
    expect(on.stdout).toContain("/p/work/webhooks/bound2");
  });

  it("with multiplexing on, a --route-profile one or two letters from an existing profile is named as a likely typo", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(webhookConfig({}, {}, { gateway: { multiplex_profiles: true } })));
    home.write("profiles/work/.keep", "");
    const typo = await svc(home, ["webhook", "subscribe", "r", "--route-profile", "wrok"]);
    expect(typo.code).toBe(0);
    expect(typo.stderr).toContain(
      `Warning: profile wrok has no directory ${home.dir}/profiles/wrok — did you mean work?`,
    );
    // An existing profile, or a new name near none, is taken without a word.
    const [existing, fresh] = await svcEach(home, [
      ["webhook", "subscribe", "r2", "--route-profile", "work"],
      ["webhook", "subscribe", "r3", "--route-profile", "marketing"],
    ]);
    expect(existing.stderr).not.toContain("did you mean");
    expect(fresh.stderr).not.toContain("did you mean");
  });

  it("a --route-profile whose profiles/<name> is a link to nothing is warned about: the subscription's runs cannot record there", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(webhookConfig({}, {}, { gateway: { multiplex_profiles: true } })));
    home.write("profiles/.keep", "");
    symlinkSync(join(home.dir, "moved/work"), join(home.dir, "profiles/work"));
    // Seen: "Subscribed r" alone; its runs then failed to record their sessions (ENOENT) with nothing said here.
    const linked = await svc(home, ["webhook", "subscribe", "r", "--route-profile", "work"]);
    expect(linked.code).toBe(0);
    expect(linked.stderr).toContain(
      `Warning: ${home.dir}/profiles/work: a symbolic link to ${home.dir}/moved/work, which is not a directory (missing or moved) — profile work's runs, cron jobs and MCP logins cannot use it: restore the directory it points to, or remove the link\n`,
    );
  });
});
