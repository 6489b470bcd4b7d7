import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { handWrittenJobs } from "../../helpers/cronJobs.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, svc } from "./svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

/** A store edited by hand: one good job, one without a name, one whose schedule is a number. */
const JOBS = {
  revision: 1,
  jobs: {
    good0001: { id: "good0001", name: "good", schedule: "every 1h", prompt: "hi", state: "enabled" },
    noname01: { id: "noname01", schedule: "every 1h", prompt: "hi", state: "enabled" },
    badsch01: { id: "badsch01", name: "badsched", schedule: 5, prompt: "hi", state: "enabled" },
  },
};

describe("svc cron on a cron store edited by hand", { timeout: 30_000 }, () => {
  it("list shows an invalid record as invalid and names its file, key and problem (it crashed: reading 'localeCompare')", async () => {
    home = tempHome();
    const path = home.write("cron/jobs.json", JSON.stringify(JOBS));
    const list = await svc(home, ["cron", "list"]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^noname01\s+-\s+-\s+invalid\s+-\s+-$/m);
    expect(list.stdout).toMatch(/^badsch01\s+badsched\s+-\s+invalid/m);
    expect(list.stdout).toMatch(/^good0001\s+good\s+every 1h\s+enabled/m);
    expect(list.stderr).toContain(
      `Warning: ${path}: jobs.noname01.name: missing — expected a string — fix the job in the file, or remove it (svc cron remove noname01)`,
    );
  });

  it("list warns about two jobs of one name (a job copied in the file): commands and routes act on the first", async () => {
    home = tempHome();
    const path = home.write(
      "cron/jobs.json",
      handWrittenJobs({
        copy0001: { name: "nightly" },
        copy0002: { name: "nightly", prompt: "the copy" },
        solo0001: { name: "solo" },
      }),
    );
    const list = await svc(home, ["cron", "list"]);
    expect(list.code).toBe(0);
    expect(list.stderr).toBe(
      `Warning: 2 jobs in ${path} are named nightly (copy0001, copy0002): svc cron commands and cron_job routes that name nightly act on the first, copy0001 — job names are unique: rename the others in the file\n`,
    );
  });

  it("list warns about a next_run that is not a time; digits in quotes get the ISO time to write, a day its month does not have the month's length", async () => {
    home = tempHome();
    const path = home.write(
      "cron/jobs.json",
      handWrittenJobs({
        unix0001: { name: "unix", next_run: "1796131244000" },
        word0001: { name: "word", next_run: "soon" },
        // JavaScript reads a day its month does not have as a day of the next month (here May 1st).
        days0001: { name: "days", next_run: "2026-04-31T09:00:00Z" },
        fine0001: { name: "fine", next_run: "2026-12-02T09:00:00Z" },
      }),
    );
    const list = await svc(home, ["cron", "list"]);
    expect(list.code).toBe(0);
    expect(list.stderr).toBe(
      [
        `Warning: unix (unix0001): next_run "1796131244000" in ${path} is not a time; a running gateway sets it from the schedule at its next check — write an ISO 8601 UTC time: "2026-12-01T13:20:44.000Z" if 1796131244000 is Unix time in milliseconds`,
        `Warning: word (word0001): next_run "soon" in ${path} is not a time; a running gateway sets it from the schedule at its next check`,
        `Warning: days (days0001): next_run "2026-04-31T09:00:00Z" in ${path} is not a time; a running gateway sets it from the schedule at its next check — 2026-04-31 is no date: April 2026 has 30 days`,
        "",
      ].join("\n"),
    );
  });

  it("list shows a next_run written by hand without a zone, or with another one, as the UTC time it is (it showed 2026-12-02 09:00 as written, read as local time)", async () => {
    home = tempHome();
    home.write(
      "cron/jobs.json",
      handWrittenJobs({
        none0001: { name: "zoneless", next_run: "2026-12-02 09:00" },
        zone0001: { name: "paris", next_run: "2026-12-02T10:00:00+01:00" },
      }),
    );
    const list = await svc(home, ["cron", "list"]);
    expect(list.code).toBe(0);
    expect(list.stderr).toBe("");
    expect(list.stdout).toMatch(
      /^none0001\s+zoneless\s+every 1h\s+enabled\s+2026-12-02T09:00:00\.000Z\s+never$/m,
    );
    expect(list.stdout).toMatch(
      /^zone0001\s+paris\s+every 1h\s+enabled\s+2026-12-02T09:00:00\.000Z\s+never$/m,
    );
  });

  it("list warns about a last_run it cannot read, naming the file, the job's key and what is wrong; the job is listed as enabled, its last run as never", async () => {
    home = tempHome();
    const path = home.write(
      "cron/jobs.json",
      handWrittenJobs({
        late0001: {
          name: "late",
          last_run: { at: "2026-12-01T09:00:00Z", status: "fine", trigger: "schedule" },
        },
        text0001: { name: "text", last_run: "yesterday" },
        good0001: { name: "good", last_run: { at: "2026-12-01T09:00:00Z", status: "ok", trigger: "manual" } },
      }),
    );
    const list = await svc(home, ["cron", "list"]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^late0001\s+late\s+every 1h\s+enabled\s+\S+\s+never$/m);
    expect(list.stdout).toMatch(/^good0001\s+good\s+.*2026-12-01T09:00:00Z ok$/m);
    const leftOut =
      "— left out: svc cron list shows the job's last run as never until its next run records one; fix last_run in the file, or remove it";
    expect(list.stderr).toBe(
      [
        `Warning: ${path}: jobs.late0001.last_run.status: expected one of "ok", "error", "interrupted", got "fine" (cron job late) ${leftOut}`,
        `Warning: ${path}: jobs.text0001.last_run: expected a mapping, got "yesterday" (cron job text) ${leftOut}`,
        "",
      ].join("\n"),
    );
    // svc config check names it the same way.
    const check = await svc(home, ["config", "check"]);
    expect(check.stderr).toContain(
      `${path}: jobs.text0001.last_run: expected a mapping, got "yesterday" (cron job text)`,
    );
  });

  it("pause, run and subscribe --cron-job refuse an invalid job with its problem; remove deletes it", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig()));
    const path = home.write("cron/jobs.json", JSON.stringify(JOBS));
    const problem = `${path}: jobs.badsch01.schedule: expected a string, got 5`;
    const pause = await svc(home, ["cron", "pause", "badsched"]);
    expect(pause.code).toBe(1);
    expect(pause.stderr).toContain(problem);
    const run = await svc(home, ["cron", "run", "badsched"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(problem);
    const subscribe = await svc(home, ["webhook", "subscribe", "fire", "--cron-job", "badsch01"]);
    expect(subscribe.code).toBe(2);
    expect(subscribe.stderr).toContain(`--cron-job badsch01: ${problem}`);
    const remove = await svc(home, ["cron", "remove", "noname01"]);
    expect(remove.stdout).toBe("Removed cron job noname01\n");
    expect(Object.keys(JSON.parse(readFileSync(path, "utf8")).jobs)).toEqual(["good0001", "badsch01"]);
  });
});

describe("svc cron create --name", { timeout: 30_000 }, () => {
  it("takes the names of Object.prototype's members, which are no job's id (constructor was 'the id of cron job \"Object\"')", async () => {
    home = tempHome();
    for (const name of ["constructor", "toString"]) {
      const created = await svc(home, [
        "cron",
        "create",
        "--name",
        name,
        "--schedule",
        "1h",
        "--prompt",
        "p",
      ]);
      expect(created.stderr).toBe("");
      expect(created.code).toBe(0);
    }
  });

  it("refuses the key of a record edited by hand into null, instead of crashing on it", async () => {
    home = tempHome();
    home.write("cron/jobs.json", JSON.stringify({ revision: 1, jobs: { x: null } }));
    const created = await svc(home, ["cron", "create", "--name", "x", "--schedule", "1h", "--prompt", "p"]);
    expect(created.code).toBe(2);
    expect(created.stderr).toContain("--name x: that is the id of a record, which commands");
  });
});

describe("svc config check and the cron stores", { timeout: 30_000 }, () => {
  it("warns about a record the gateway would not run and a profile's store it cannot read (it said ok)", async () => {
    home = tempHome();
    const path = home.write("cron/jobs.json", JSON.stringify(JOBS));
    const work = home.write("profiles/work/cron/jobs.json", "{");
    const check = await svc(home, ["config", "check"]);
    expect(check.code).toBe(0);
    expect(check.stderr).toContain(
      `Warning: ${path}: jobs.noname01.name: missing — expected a string — fix the job in the file, or remove it (svc cron remove noname01); the gateway does not run it`,
    );
    expect(check.stderr).toContain(`Warning: ${work}: not valid JSON at line 1, column 2`);
    expect(check.stderr).toContain("the gateway skips this profile's cron jobs until then");
  });
});

describe("svc config check and a cron job's target", { timeout: 30_000 }, () => {
  it("warns about a job whose platform is not enabled or that lacks a recipient (every run's delivery fails); log and a set-up chat pass", async () => {
    home = tempHome();
    const base = cliConfig() as { platforms: Record<string, unknown> };
    const slack = { enabled: true, token: "xoxb-1" };
    home.write("config.yaml", stringify({ ...base, platforms: { ...base.platforms, slack } }), 0o600);
    const job = (name: string, deliver: string, deliver_extra: Record<string, string>) => ({
      id: name,
      name,
      schedule: "every 1h",
      prompt: "p",
      deliver,
      deliver_extra,
      state: "enabled",
    });
    const path = home.write(
      "cron/jobs.json",
      JSON.stringify({
        revision: 1,
        jobs: {
          tgoff: job("tgoff", "telegram", { chat_id: "5" }),
          slnone: job("slnone", "slack", {}),
          slok: job("slok", "slack", { chat_id: "C1" }),
          logged: job("logged", "log", {}),
        },
      }),
    );
    const check = await svc(home, ["config", "check"]);
    expect(check.code).toBe(0);
    const warned = check.stderr.split("\n").filter((line) => line.includes(path));
    expect(warned).toEqual([
      `Warning: ${path}: jobs.tgoff.deliver: telegram needs platforms.telegram enabled — set platforms.telegram.enabled: true with its credentials (see docs/delivery-targets.md), or deliver to log (cron job tgoff)`,
      `Warning: ${path}: jobs.slnone.deliver_extra.chat_id: missing and platforms.slack.home_channel is not set — set one of them so slack knows where to deliver (cron job slnone)`,
    ]);
  });

  it("warns about a job that delivers to log with deliver_extra keys, which the log never reads (svc cron create says so once)", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig()), 0o600);
    const path = home.write(
      "cron/jobs.json",
      JSON.stringify({
        revision: 1,
        jobs: {
          extra: {
            id: "extra",
            name: "extra",
            schedule: "every 1h",
            prompt: "p",
            deliver_extra: { chat_id: "5" },
          },
          plain: {
            id: "plain",
            name: "plain",
            schedule: "every 1h",
            prompt: "p",
            deliver: "log",
            deliver_extra: {},
          },
        },
      }),
    );
    const check = await svc(home, ["config", "check"]);
    expect(check.code).toBe(0);
    expect(check.stderr.split("\n").filter((line) => line.includes(path))).toEqual([
      `Warning: ${path}: jobs.extra.deliver_extra: has no effect while the job delivers to log (the log reads no key) — remove it from the job, or set the job's deliver to a target (cron job extra)`,
    ]);
  });
});
