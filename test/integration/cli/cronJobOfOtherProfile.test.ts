import { afterEach, describe, expect, it } from "vitest";
import { oneJobStore } from "../../helpers/cronJobs.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { runInProcess } from "../../helpers/inProcessCli.js";

let home: TempHome;
afterEach(() => home.cleanup());

const cron = (...args: string[]) =>
  runInProcess(["cron", ...args], { SVC_HOME: home.dir, PATH: process.env.PATH ?? "" });
const NEXT = { prompt: "hi", next_run: "2099-01-01T00:00:00.000Z" };

describe("svc cron <command> of a job that is in another profile's store", () => {
  it("names the profile that has it and the flag to give, instead of only 'see svc cron list' (which lists none)", async () => {
    home = tempHome();
    home.write("config.yaml", "");
    home.write("profiles/work/cron/jobs.json", oneJobStore({ name: "nightly", ...NEXT }));
    home.write("cron/jobs.json", oneJobStore({ name: "digest", ...NEXT }));

    // Seen: `cron job "nightly" not found in <home>/cron/jobs.json — see `svc cron list` for ids and names`.
    const left = await cron("pause", "nightly");
    expect(left.code).toBe(2);
    expect(left.stderr).toBe(
      `svc: cron job "nightly" not found in ${home.dir}/cron/jobs.json — it is a job of profile work: add --profile work\n`,
    );
    const given = await cron("remove", "digest", "--profile", "work");
    expect(given.code).toBe(2);
    expect(given.stderr).toBe(
      `svc: cron job "digest" not found in ${home.dir}/profiles/work/cron/jobs.json — it is a job of the default profile: leave --profile out\n`,
    );
    // A job in no store keeps the plain answer, and nothing was changed in either store.
    expect((await cron("resume", "weekly")).stderr).toBe(
      `svc: cron job "weekly" not found in ${home.dir}/cron/jobs.json — see \`svc cron list\` for ids and names\n`,
    );
    expect((await cron("list", "--profile", "work")).stdout).toContain("nightly  every 1d  enabled");
    expect((await cron("list")).stdout).toContain("digest  every 1d  enabled");
  });

  it("names that profile also when this one has a job of a near name: the job named exists, so the near one is not suggested", async () => {
    home = tempHome();
    home.write("config.yaml", "");
    home.write("profiles/work/cron/jobs.json", oneJobStore({ name: "alpha", ...NEXT }));
    home.write("cron/jobs.json", oneJobStore({ name: "alphb", ...NEXT }));
    // Seen: `... — did you mean alphb? (see ...)`, steering the user to pause another job.
    const paused = await cron("pause", "alpha");
    expect(paused.code).toBe(2);
    expect(paused.stderr).toBe(
      `svc: cron job "alpha" not found in ${home.dir}/cron/jobs.json — it is a job of profile work: add --profile work\n`,
    );
    // A name in no store is still told the near one.
    expect((await cron("pause", "alphc")).stderr).toContain("— did you mean alphb? (see `svc cron list`");
    expect((await cron("list")).stdout).toContain("alphb  every 1d  enabled");
  });

  it("svc cron list of a profile with none names the profiles that have jobs, and the command that lists them", async () => {
    home = tempHome();
    home.write("config.yaml", "");
    home.write("profiles/work/cron/jobs.json", oneJobStore({ name: "nightly", ...NEXT }));
    home.write("profiles/home/.env", "");
    const create = 'Create one: svc cron create --name <name> --schedule "every 1h" --prompt <text>';
    // Seen: only "No cron jobs. Create one: ...", as if there were none anywhere.
    expect((await cron("list")).stdout).toBe(
      `No cron jobs. ${create}\nJobs of other profiles: work (1) — svc cron list --profile work\n`,
    );
    home.write("cron/jobs.json", oneJobStore({ name: "digest", ...NEXT }));
    expect((await cron("list", "--profile", "home")).stdout).toBe(
      `No cron jobs. ${create.replace("create", "create --profile home")}\nJobs of other profiles: the default profile (1), work (1) — svc cron list\n`,
    );
  });
});
