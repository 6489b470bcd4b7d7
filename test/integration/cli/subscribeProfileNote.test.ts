import { readFileSync, symlinkSync } from "node:fs";
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

  it("a --cron-job in a profile whose profiles/<name> is a link to nothing is refused as a store that cannot be read, not as a job to create there", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(webhookConfig({}, {}, { gateway: { multiplex_profiles: true } })));
    const cron = ["cron", "create", "--name", "tick", "--schedule", "@daily", "--prompt", "hi"];
    expect((await svc(home, [...cron, "--profile", "beta"])).code).toBe(0);
    expect(
      (await svc(home, ["webhook", "subscribe", "sy", "--cron-job", "tick", "--route-profile", "beta"])).code,
    ).toBe(0);
    symlinkSync(join(home.dir, "moved/alpha"), join(home.dir, "profiles/alpha"));
    const link = `${home.dir}/profiles/alpha: a symbolic link to ${home.dir}/moved/alpha, which is not a directory (missing or moved) — profile alpha's runs, cron jobs and MCP logins cannot use it: restore the directory it points to, or remove the link`;
    const store = `${home.dir}/profiles/alpha/cron/jobs.json`;
    const until =
      "until then every event on this route would be answered 503 (the sender retries) — nothing was written";
    // Seen: "--cron-job tick: no such cron job in profile alpha (…) — create it with svc cron create --profile alpha",
    // which then failed on the same link.
    const given = await svc(home, [
      "webhook",
      "subscribe",
      "sx",
      "--cron-job",
      "tick",
      "--route-profile",
      "alpha",
    ]);
    expect(given.code).toBe(2);
    expect(given.stderr).toBe(`svc: --cron-job tick: ${store} cannot be read: ${link}; ${until}\n`);
    // A job set earlier, the route rebound to the profile.
    const rebound = await svc(home, ["webhook", "subscribe", "sy", "--route-profile", "alpha"]);
    expect(rebound.code).toBe(2);
    expect(rebound.stderr).toBe(
      `svc: sy fires cron job tick (set earlier): ${store} cannot be read: ${link}; ${until}\n`,
    );
    const records = JSON.parse(readFileSync(join(home.dir, "webhook_subscriptions.json"), "utf8")) as Record<
      string,
      { profile?: string }
    >;
    expect(Object.keys(records)).toEqual(["sy"]);
    expect(records.sy?.profile).toBe("beta");
  });
});
