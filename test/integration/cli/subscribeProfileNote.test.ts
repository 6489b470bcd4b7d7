import { existsSync, mkdirSync, readFileSync, renameSync, symlinkSync } from "node:fs";
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

  it.each([
    ["the default profile", undefined],
    ["a named profile", "alpha"],
  ])(
    "a --cron-job in %s whose cron directory is a link to nothing is refused as a store that cannot be read, and svc cron create names the link",
    async (_, profile) => {
      home = tempHome();
      home.write("config.yaml", stringify(webhookConfig({}, {}, { gateway: { multiplex_profiles: true } })));
      const cron = ["cron", "create", "--name", "tick", "--schedule", "@daily", "--prompt", "hi"];
      // A job of the name in another profile, which the refusal is not to offer to bind to.
      expect((await svc(home, [...cron, "--profile", "beta"])).code).toBe(0);
      const root = profile === undefined ? home.dir : join(home.dir, "profiles", profile);
      mkdirSync(root, { recursive: true });
      symlinkSync(join(home.dir, "moved/cron"), join(root, "cron"));
      const whose = profile === undefined ? "the default profile's" : `profile ${profile}'s`;
      const link = `${root}/cron: a symbolic link to ${home.dir}/moved/cron, which is not a directory (missing or moved) — ${whose} cron jobs cannot be kept there: restore the directory it points to, or remove the link (svc makes the directory)`;
      // Seen: "--cron-job tick: no such cron job (…/cron/jobs.json); it is a job of profile beta … add
      // --route-profile beta, or create it with svc cron create", which then failed on the same link.
      const bound = profile === undefined ? [] : ["--route-profile", profile];
      const given = await svc(home, ["webhook", "subscribe", "sx", "--cron-job", "tick", ...bound]);
      expect(given.code).toBe(2);
      expect(given.stderr).toBe(
        `svc: --cron-job tick: ${root}/cron/jobs.json cannot be read: ${link}; until then every event on this route would be answered 503 (the sender retries) — nothing was written\n`,
      );
      expect(existsSync(join(home.dir, "webhook_subscriptions.json"))).toBe(false);
      // Seen: "svc: ENOENT: no such file or directory, mkdir '…/cron'" (exit 1).
      const flag = profile === undefined ? [] : ["--profile", profile];
      const created = await svc(home, [...cron, ...flag]);
      expect(created.code).toBe(2);
      expect(created.stderr).toBe(`svc: ${link}\n`);
      expect(existsSync(join(home.dir, "moved"))).toBe(false);
      // Not "No cron jobs. Create one: …".
      const listed = await svc(home, ["cron", "list", ...flag]);
      expect(listed.code).toBe(2);
      expect(listed.stderr).toBe(`svc: ${link}\n`);
    },
  );

  it("a cron directory that is a file, or a jobs.json that links into a directory not there, is refused the same way; one that links to a file not made yet is used", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(webhookConfig({})));
    const until =
      "until then every event on this route would be answered 503 (the sender retries) — nothing was written";
    const file = home.write("cron", "a file where the cron directory goes");
    const filed = await svc(home, ["webhook", "subscribe", "sx", "--cron-job", "tick"]);
    expect(filed.code).toBe(2);
    expect(filed.stderr).toBe(
      `svc: --cron-job tick: ${file}/jobs.json cannot be read: ${file} is not a directory — the default profile's cron jobs cannot be kept there: move the file away (svc makes the directory); ${until}\n`,
    );

    renameSync(file, join(home.dir, "cron.txt"));
    mkdirSync(join(home.dir, "cron"));
    const jobs = join(home.dir, "cron", "jobs.json");
    symlinkSync(join(home.dir, "unmounted/jobs.json"), jobs);
    const linked = await svc(home, ["webhook", "subscribe", "sx", "--cron-job", "tick"]);
    expect(linked.code).toBe(2);
    expect(linked.stderr).toBe(
      `svc: --cron-job tick: ${jobs} cannot be read: ${jobs}: a symbolic link to ${home.dir}/unmounted/jobs.json, whose directory ${home.dir}/unmounted is not there (missing or moved) — the default profile's cron jobs are kept in the file it points to: restore that directory, or remove the link (svc makes the file); ${until}\n`,
    );

    // A link to a file its first write makes (a dotfiles checkout): the job is created there, the link kept.
    mkdirSync(join(home.dir, "unmounted"));
    const cron = ["cron", "create", "--name", "tick", "--schedule", "@daily", "--prompt", "hi"];
    expect((await svc(home, cron)).code).toBe(0);
    expect(readFileSync(join(home.dir, "unmounted/jobs.json"), "utf8")).toContain('"name": "tick"');
    const subscribed = await svc(home, ["webhook", "subscribe", "sx", "--cron-job", "tick"]);
    expect(subscribed.code).toBe(0);
  });

  it("svc webhook list does not say a subscription's events are dropped when its cron directory became a link to nothing (the gateway answers them 503)", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(webhookConfig({})));
    const cron = ["cron", "create", "--name", "tick", "--schedule", "@daily", "--prompt", "hi"];
    expect((await svc(home, cron)).code).toBe(0);
    expect((await svc(home, ["webhook", "subscribe", "sx", "--cron-job", "tick"])).code).toBe(0);
    renameSync(join(home.dir, "cron"), join(home.dir, "cron-real"));
    symlinkSync(join(home.dir, "moved/cron"), join(home.dir, "cron"));
    const listed = await svc(home, ["webhook", "list"]);
    expect(listed.code).toBe(0);
    // Seen: "sx fires cron job tick, which is not in …/cron/jobs.json (svc cron list): the gateway answers 202
    // accepted and drops its events without a run".
    expect(listed.stderr).not.toContain("fires cron job tick");
    expect(listed.stdout).toContain("cron:tick");
  });
});
