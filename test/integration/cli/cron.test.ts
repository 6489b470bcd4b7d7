import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { sentTexts, startFakeTelegram } from "../../fakes/telegram.js";
import { RECORDER_AGENT, recorderAgent } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, svc, svcOneProcess } from "./svc.js";

svcOneProcess();

/** A fresh SVC_HOME whose agent is the recorder, replying `reply`. */
function recorderHome(reply: string): TempHome {
  const home = tempHome();
  home.write("agent/recorder.sh", RECORDER_AGENT, 0o755);
  home.write("config.yaml", stringify(cliConfig({}, { agent: recorderAgent(reply) })));
  return home;
}

/** The jobs of a cron store: `<home>/cron/jobs.json`, or below `dir` (a profile's root). */
function storedJobs(home: TempHome, ...dir: string[]): Record<string, Record<string, unknown>> {
  return JSON.parse(readFileSync(join(home.dir, ...dir, "cron", "jobs.json"), "utf8")).jobs;
}

/** `svc cron create` of job `tg` (daily, `prompt`) delivering to Telegram chat 42. */
const createTelegramJob = (prompt: string) => [
  "cron",
  "create",
  "--name",
  "tg",
  "--schedule",
  "@daily",
  "--prompt",
  prompt,
  "--deliver",
  "telegram",
  "--deliver-extra",
  "chat_id=42",
];

describe("svc cron (real subprocesses)", { timeout: 90_000 }, () => {
  let home: TempHome;
  beforeAll(() => {
    home = recorderHome("the agent's reply");
  });
  afterAll(() => home.cleanup());

  const jobs = () => storedJobs(home);

  it("create stores the job (0600) with its next run; list shows it", async () => {
    const created = await svc(home, [
      "cron",
      "create",
      "--name",
      "digest",
      "--schedule",
      "every 15m",
      "--prompt",
      "Summarize the day",
      "--deliver-extra",
      "chat_id=42",
    ]);
    expect(created.code).toBe(0);
    const id = /Created cron job ([0-9a-f]+) \(digest\)/.exec(created.stdout)?.[1];
    expect(id).toBeDefined();
    const job = jobs()[id as string];
    expect(job).toMatchObject({
      name: "digest",
      schedule: "every 15m",
      prompt: "Summarize the day",
      deliver: "log",
      deliver_extra: { chat_id: "42" },
      state: "enabled",
    });
    expect(Date.parse(job?.next_run as string) - Date.parse(job?.created_at as string)).toBe(15 * 60_000);
    expect((await import("node:fs")).statSync(join(home.dir, "cron", "jobs.json")).mode & 0o777).toBe(0o600);
    const list = await svc(home, ["cron", "list"]);
    expect(list.stdout).toMatch(/^ID\s+NAME\s+SCHEDULE\s+STATE\s+NEXT RUN\s+LAST RUN$/m);
    expect(list.stdout).toMatch(
      new RegExp(`^${id}\\s+digest\\s+every 15m\\s+enabled\\s+\\S+Z\\s+never$`, "m"),
    );
  });

  it("refuses a bad schedule, a duplicate name, an unknown --deliver target and an unknown job with clear messages", async () => {
    const bad = await svc(home, [
      "cron",
      "create",
      "--name",
      "x",
      "--schedule",
      "61 * * * *",
      "--prompt",
      "p",
    ]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('schedule "61 * * * *": not a valid cron expression');
    // The help names every form the schedule takes, macros too.
    const help = await svc(home, ["cron", "create", "--help"]);
    expect(help.stdout.replace(/\s+/g, " ")).toContain(
      'cron expression (5 fields, UTC), a macro (@hourly, @daily (or @midnight), @weekly, @monthly, @yearly (or @annually)) or an interval: "every 15m", "30s", "2h", "1d"',
    );
    const dup = await svc(home, ["cron", "create", "--name", "digest", "--schedule", "1h", "--prompt", "p"]);
    expect(dup.stderr).toContain('a cron job named "digest" already exists');
    // A name that is another job's id would make that job unreachable by its own id.
    const digestId = Object.values(jobs()).find((j) => j.name === "digest")?.id as string;
    const shadow = await svc(home, [
      "cron",
      "create",
      "--name",
      digestId,
      "--schedule",
      "1h",
      "--prompt",
      "p",
    ]);
    expect(shadow.code).toBe(2);
    expect(shadow.stderr).toContain(
      `--name ${digestId}: that is the id of cron job "digest", which commands and cron_job routes would find instead — choose another --name`,
    );
    const target = await svc(home, [
      "cron",
      "create",
      "--name",
      "x",
      "--schedule",
      "1h",
      "--prompt",
      "p",
      "--deliver",
      "telegarm",
    ]);
    expect(target.code).toBe(2);
    expect(target.stderr).toContain(
      '--deliver: unknown target "telegarm" — did you mean "telegram"? use one of log, telegram,',
    );
    // '-' is allowed, but not first: the message says so, as the store's record check does.
    const dash = await svc(home, ["cron", "create", "--name", "-x", "--schedule", "1h", "--prompt", "p"]);
    expect(dash.code).toBe(2);
    expect(dash.stderr).toContain(
      `--name "-x": use letters, digits, '.', '_' and '-' (1-64, starting with a letter or digit)`,
    );
    // A character outside the rule is named, with the name to write, as a route name's is.
    const spaced = await svc(home, [
      "cron",
      "create",
      "--name",
      "bad name",
      "--schedule",
      "1h",
      "--prompt",
      "p",
    ]);
    expect(spaced.code).toBe(2);
    expect(spaced.stderr).toContain(
      `--name "bad name": use letters, digits, '.', '_' and '-' (1-64, starting with a letter or digit) — " " is not one of them: write bad-name`,
    );
    const empty = await svc(home, ["cron", "create", "--name", "x", "--schedule", "1h", "--prompt", " "]);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain("--prompt: must not be empty");
    expect(Object.values(jobs()).some((job) => job.name === "x")).toBe(false);
    const unknown = await svc(home, ["cron", "pause", "nope"]);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('cron job "nope" not found');
    // Names of Object.prototype's members are unknown jobs too: nothing is written, list still works.
    const before = readFileSync(join(home.dir, "cron", "jobs.json"), "utf8");
    for (const [command, ref] of [
      ["pause", "constructor"],
      ["run", "toString"],
    ] as const) {
      const answer = await svc(home, ["cron", command, ref]);
      expect(answer.code).toBe(2);
      expect(answer.stderr).toContain(`cron job "${ref}" not found`);
    }
    expect(readFileSync(join(home.dir, "cron", "jobs.json"), "utf8")).toBe(before);
  });

  it("create accepts a target whose platform is not set up yet but warns that its runs fail until it is", async () => {
    const create = (name: string, ...extra: string[]) =>
      svc(home, ["cron", "create", "--name", name, "--schedule", "1h", "--prompt", "p", ...extra]);
    const telegram = await create("to-telegram", "--deliver", "telegram");
    expect(telegram.code).toBe(0);
    expect(telegram.stderr).toContain(
      "Warning: deliver: telegram needs platforms.telegram enabled — set platforms.telegram.enabled: true",
    );
    // The log target reads no key: said as svc webhook subscribe says it; the job is stored as given.
    const logged = await create("to-log", "--deliver-extra", "chat_id=42");
    expect(logged.code).toBe(0);
    expect(logged.stderr).toBe(
      "Warning: --deliver-extra has no effect while the job delivers to log (replies go to the gateway log) — to deliver elsewhere: svc cron remove to-log, then create it again with --deliver <target>, e.g. --deliver telegram\n",
    );
    const comment = await create("to-pr", "--deliver", "forge_comment", "--deliver-extra", "pr_number=7");
    expect(comment.code).toBe(0);
    expect(comment.stderr).toContain("Warning: deliver_extra.repo: required for forge_comment");
    expect(comment.stderr).not.toContain("pr_number");
    expect(comment.stderr).toContain("--deliver-extra <key>=<value>: svc cron remove to-pr");
    const complete = await create(
      "to-pr-7",
      "--deliver",
      "forge_comment",
      "--deliver-extra",
      "repo=o/r",
      "--deliver-extra",
      "pr_number=7",
    );
    expect(complete.stderr).toBe("");
    const names = Object.values(jobs()).map((job) => job.name);
    expect(names).toEqual(expect.arrayContaining(["to-telegram", "to-log", "to-pr", "to-pr-7"]));
    for (const name of ["to-telegram", "to-log", "to-pr", "to-pr-7"])
      expect((await svc(home, ["cron", "remove", name])).code).toBe(0);
  });

  it("create takes every 1M as minutes, as written, and warns that M is not months", async () => {
    const create = (name: string, schedule: string) =>
      svc(home, ["cron", "create", "--name", name, "--schedule", schedule, "--prompt", "p"]);
    const capital = await create("monthly-meant", "every 1M");
    expect(capital.code).toBe(0);
    expect(capital.stderr).toBe(
      'Warning: schedule "every 1M": M is read as minutes (an interval\'s unit is read in any case), so the job runs every 1 minute — for a run once a month write "@monthly" or a cron expression such as "0 9 1 * *" (09:00 UTC on the 1st)\n',
    );
    expect((await create("minutes-meant", "every 5m")).stderr).toBe("");
    for (const name of ["monthly-meant", "minutes-meant"])
      expect((await svc(home, ["cron", "remove", name])).code).toBe(0);
  });

  it("with state.backend: redis, create, pause, resume and remove say that every instance runs the jobs of its own home's store, and to copy it there; with local, nothing is said", async () => {
    // Each instance sharing the Redis reads its own cron/jobs.json, and the due-time lease names a job by its
    // id, drawn at random: a job created in each home separately runs once per instance.
    const shared = tempHome();
    try {
      shared.write(
        "config.yaml",
        stringify(cliConfig({}, { state: { backend: "redis", redis_url: "redis://127.0.0.1:1/0" } })),
      );
      const store = join(shared.dir, "cron", "jobs.json");
      const note = `Note: with state.backend: redis every gateway instance runs the jobs of its own home's cron store — copy ${store} to the same place in each instance's home after this change (a job created separately in each home has another id there, and runs once per instance)\n`;
      const created = await svc(shared, [
        "cron",
        "create",
        "--name",
        "tick",
        "--schedule",
        "every 5m",
        "--prompt",
        "p",
      ]);
      expect(created.code).toBe(0);
      expect(created.stderr).toBe(note);
      // Each instance records the runs it made in its own store: LAST RUN is this home's gateway's.
      const listed = await svc(shared, ["cron", "list"]);
      expect(listed.stdout).toMatch(/^\S+\s+tick\s+every 5m\s+enabled\s+\S+\s+never$/m);
      expect(listed.stderr).toBe(
        "Note: with state.backend: redis LAST RUN is the last run the gateway of this home made; the other instances record theirs in the cron stores of their own homes (a job's runs go to whichever instance claims each due time)\n",
      );
      // Routes that fire the job are looked for in Redis (unreachable here): only the note is asserted.
      for (const change of ["pause", "resume", "remove"]) {
        const changed = await svc(shared, ["cron", change, "tick"]);
        expect(changed.code).toBe(0);
        expect(changed.stderr).toContain(note);
      }
    } finally {
      shared.cleanup();
    }
    const local = await svc(home, [
      "cron",
      "create",
      "--name",
      "solo",
      "--schedule",
      "every 5m",
      "--prompt",
      "p",
    ]);
    expect(local.stderr).toBe("");
    expect((await svc(home, ["cron", "list"])).stderr).toBe("");
    expect((await svc(home, ["cron", "pause", "solo"])).stderr).toBe("");
    expect((await svc(home, ["cron", "remove", "solo"])).stderr).toBe("");
  });

  it("create refuses a blank --deliver-extra value (exit 2) as svc webhook subscribe does; nothing is stored", async () => {
    const file = join(home.dir, "cron", "jobs.json");
    const before = existsSync(file) ? readFileSync(file, "utf8") : undefined;
    const create = (name: string, ...extra: string[]) =>
      svc(home, ["cron", "create", "--name", name, "--schedule", "1h", "--prompt", "p", ...extra]);
    const spaces = await create("blank-spaces", "--deliver", "telegram", "--deliver-extra", "chat_id=   ");
    const empty = await create("blank-empty", "--deliver", "telegram", "--deliver-extra", "chat_id=");
    const later = await create(
      "blank-later",
      "--deliver-extra",
      "chat_id=42",
      "--deliver-extra",
      "thread_id= ",
    );
    const subscribe = await svc(home, [
      "webhook",
      "subscribe",
      "blank-hook",
      "--deliver-extra",
      "chat_id=   ",
    ]);
    for (const answer of [spaces, empty, later, subscribe]) {
      expect(answer.code).toBe(2);
      expect(answer.stdout).toBe("");
      expect(answer.stderr).not.toContain("Warning");
    }
    // The same refusal; only what to do instead differs: a new job has no key to remove.
    expect(subscribe.stderr).toBe(
      "svc: --deliver-extra chat_id=: only spaces — give a value, or chat_id= with nothing after it to remove the key\n",
    );
    expect(spaces.stderr).toBe(
      "svc: --deliver-extra chat_id=: only spaces — give a value, or leave --deliver-extra chat_id= out\n",
    );
    expect(empty.stderr).toBe(
      "svc: --deliver-extra chat_id=: empty — give a value, or leave --deliver-extra chat_id= out\n",
    );
    expect(later.stderr).toBe(
      "svc: --deliver-extra thread_id=: only spaces — give a value, or leave --deliver-extra thread_id= out\n",
    );
    expect(existsSync(file) ? readFileSync(file, "utf8") : undefined).toBe(before);
    expect(existsSync(join(home.dir, "webhook_subscriptions.json"))).toBe(false);
  });

  it("pause, resume, run (prints the reply, records last_run) and remove by name", async () => {
    expect((await svc(home, ["cron", "pause", "digest"])).stdout).toContain("is now paused");
    expect((await svc(home, ["cron", "list"])).stdout).toMatch(/digest\s+every 15m\s+paused\s+-\s+never/);
    expect((await svc(home, ["cron", "resume", "digest"])).stdout).toContain("is now enabled");
    const run = await svc(home, ["cron", "run", "digest"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe("the agent's reply\n");
    const job = Object.values(jobs())[0];
    expect(job?.last_run).toMatchObject({ status: "ok", trigger: "manual" });
    expect((await svc(home, ["cron", "remove", "digest"])).stdout).toContain("Removed cron job");
    expect(jobs()).toEqual({});
  });

  it("run prints the agent's reply also when its delivery fails (exit 1, the delivery's error on stderr): the run is not lost", async () => {
    await svc(home, createTelegramJob("summarize"));
    const run = await svc(home, ["cron", "run", "tg"]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("the agent's reply\n");
    expect(run.stderr).toBe(
      'svc: cron job tg: run failed — delivery target "telegram" is not enabled — set platforms.telegram.enabled: true with its credentials\n',
    );
    const job = Object.values(jobs()).find((j) => j.name === "tg");
    expect(job?.last_run).toMatchObject({ status: "error", trigger: "manual" });
    // LAST RUN reads "error"; the list says why beside the table (the reason was only in jobs.json and the log).
    const list = await svc(home, ["cron", "list"]);
    expect(list.stdout).toMatch(/^\S+ +tg +@daily +enabled +\S+ +\S+ error$/m);
    expect(list.stderr).toContain(
      `Note: tg's last run (${(job?.last_run as { at?: string } | undefined)?.at}, manual) failed: delivery target "telegram" is not enabled — set platforms.telegram.enabled: true with its credentials\n`,
    );
    await svc(home, ["cron", "remove", "tg"]);
  });
});

describe("svc cron run to a chat", { timeout: 90_000 }, () => {
  it("says where the reply went (stdout keeps the reply alone): a first run's user need not guess", async () => {
    const telegram = await startFakeTelegram();
    const home = tempHome();
    try {
      home.write("agent/recorder.sh", RECORDER_AGENT, 0o755);
      const config = cliConfig({}, { agent: recorderAgent("the digest") });
      const platforms = config.platforms as Record<string, unknown>;
      platforms.telegram = { enabled: true, token: "1:tg", base_url: telegram.url };
      home.write("config.yaml", stringify(config));
      await svc(home, createTelegramJob("digest"));
      const run = await svc(home, ["cron", "run", "tg"]);
      expect(run).toMatchObject({ code: 0, stdout: "the digest\n", stderr: "Delivered to telegram (42).\n" });
      expect(sentTexts(telegram)).toEqual(["the digest"]);
    } finally {
      home.cleanup();
      await telegram.close();
    }
  });
});

describe("svc cron run of a job whose deliver_extra has a value in braces", { timeout: 90_000 }, () => {
  it("delivers to the chat and the thread as written, as create's warning says: a job has no event to fill them", async () => {
    const telegram = await startFakeTelegram();
    const home = tempHome();
    try {
      home.write("agent/recorder.sh", RECORDER_AGENT, 0o755);
      const config = cliConfig({}, { agent: recorderAgent("the digest") });
      const platforms = config.platforms as Record<string, unknown>;
      platforms.telegram = { enabled: true, token: "1:tg", base_url: telegram.url };
      home.write("config.yaml", stringify(config));
      const create = (name: string, ...extra: string[]) =>
        svc(home, [
          "cron",
          "create",
          "--name",
          name,
          "--schedule",
          "@daily",
          "--prompt",
          name,
          "--deliver",
          "telegram",
          ...extra.flatMap((pair) => ["--deliver-extra", pair]),
        ]);
      const tk = await create("tk", "chat_id={team}");
      expect(tk.stderr).toContain('"{team}" is sent as written');
      await create("th", "chat_id=42", "message_thread_id={pull_request.number}");
      expect(await svc(home, ["cron", "run", "tk"])).toMatchObject({
        code: 0,
        stdout: "the digest\n",
        stderr: "Delivered to telegram ({team}).\n",
      });
      expect((await svc(home, ["cron", "run", "th"])).code).toBe(0);
      const sent = telegram.requests
        .filter((r) => r.path.endsWith("/sendMessage"))
        .map((r) => r.json as Record<string, unknown>);
      expect(sent).toEqual([
        { chat_id: "{team}", text: "the digest" },
        { chat_id: 42, message_thread_id: "{pull_request.number}", text: "the digest" },
      ]);
    } finally {
      home.cleanup();
      await telegram.close();
    }
  });
});

describe("svc cron --profile and cron_job subscriptions (each profile has its own cron store)", {
  timeout: 90_000,
}, () => {
  let home: TempHome;
  beforeAll(() => {
    home = recorderHome("work reply");
  });
  afterAll(() => home.cleanup());

  const workJobs = () => storedJobs(home, "profiles", "work");

  it("create, list, pause, resume and run work on the chosen profile's store only", async () => {
    const created = await svc(home, [
      "cron",
      "create",
      "--profile",
      "work",
      "--name",
      "nightly",
      "--schedule",
      "1d",
      "--prompt",
      "p",
    ]);
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^Created cron job [0-9a-f]+ \(nightly\) in profile work, /);
    expect(Object.values(workJobs())).toMatchObject([{ name: "nightly", state: "enabled" }]);
    expect(existsSync(join(home.dir, "cron", "jobs.json"))).toBe(false);

    expect((await svc(home, ["cron", "list", "--profile", "work"])).stdout).toMatch(
      /\snightly\s+1d\s+enabled/,
    );
    expect((await svc(home, ["cron", "list"])).stdout).toContain("No cron jobs.");
    expect((await svc(home, ["cron", "list", "--profile", "home"])).stdout).toContain(
      "Create one: svc cron create --profile home --name",
    );
    const elsewhere = await svc(home, ["cron", "pause", "nightly"]);
    expect(elsewhere.code).toBe(2);
    expect(elsewhere.stderr).toContain('cron job "nightly" not found in');
    const paused = await svc(home, ["cron", "pause", "nightly", "--profile", "work"]);
    expect(paused.stdout).toContain("is now paused");
    expect(Object.values(workJobs())[0]?.state).toBe("paused");
    await svc(home, ["cron", "resume", "--profile", "work", "nightly"]);

    const run = await svc(home, ["cron", "run", "nightly", "--profile", "work"]);
    expect(run.stdout).toBe("work reply\n");
    expect(Object.values(workJobs())[0]?.last_run).toMatchObject({ status: "ok", trigger: "manual" });

    const bad = await svc(home, ["cron", "list", "--profile", "../evil"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('profile name "../evil" is not valid');
  });

  it("webhook subscribe --cron-job is checked against the --route-profile's store, also when rebinding", async () => {
    const inWork = await svc(home, [
      "webhook",
      "subscribe",
      "w",
      "--cron-job",
      "nightly",
      "--route-profile",
      "work",
    ]);
    const inDefault = await svc(home, ["webhook", "subscribe", "d", "--cron-job", "nightly"]);
    const inHome = await svc(home, [
      "webhook",
      "subscribe",
      "h",
      "--cron-job",
      "nightly",
      "--route-profile",
      "home",
    ]);
    expect(inWork.code).toBe(0);
    expect(inDefault.code).toBe(2);
    expect(inDefault.stderr).toContain("--cron-job nightly: no such cron job (");
    // The job is one of another profile's: the refusal names it and the --route-profile that binds to it.
    expect(inDefault.stderr).toContain(
      "; it is a job of profile work, and a subscription fires the jobs of the profile it is bound to — add --route-profile work, or create it with svc cron create, or see svc cron list",
    );
    expect(inHome.code).toBe(2);
    expect(inHome.stderr).toContain("--cron-job nightly: no such cron job in profile home (");
    expect(inHome.stderr).toContain("svc cron create --profile home");

    const rebind = await svc(home, ["webhook", "subscribe", "w", "--route-profile", "home"]);
    expect(rebind.code).toBe(2);
    // The job was set earlier, not in this command: the refusal says so, and does not ask to add the
    // --route-profile work the command moves away from.
    expect(rebind.stderr).toContain(
      "svc: w fires cron job nightly (set earlier), which is not a job of profile home, the profile --route-profile home binds it to: a subscription fires the jobs of its own profile",
    );
    expect(rebind.stderr).toContain("it is a job of profile work");
    expect(rebind.stderr).toContain(
      "create it in profile home (svc cron create --profile home), name one of its jobs with --cron-job, or add --no-cron-job",
    );
    expect(rebind.stderr).not.toContain("add --route-profile work");
    const stored = JSON.parse(readFileSync(join(home.dir, "webhook_subscriptions.json"), "utf8"));
    expect(Object.keys(stored)).toEqual(["w"]);
    expect(stored.w).toMatchObject({ cron_job: "nightly", profile: "work" });
  });
});

describe("svc cron create --profile with a name one or two letters from an existing profile", {
  timeout: 30_000,
}, () => {
  it("creates the job as asked but warns that the profile is new, naming the one meant and how to move the job", async () => {
    const home = tempHome();
    try {
      home.write("profiles/work/skills/.keep", "");
      const created = await svc(home, [
        "cron",
        "create",
        "--profile",
        "wrok",
        "--name",
        "j",
        "--schedule",
        "every 1h",
        "--prompt",
        "hi",
      ]);
      expect(created.code).toBe(0);
      expect(created.stderr).toContain(
        `Warning: profile wrok had no directory (${join(home.dir, "profiles", "wrok")} is new) — did you mean work? The job runs in profile wrok, with its skills, .env and MCP tokens; to move it: svc cron remove j --profile wrok, then create it again with --profile work`,
      );
      // The profile exists now: a second job there is no typo.
      const again = await svc(home, [
        "cron",
        "create",
        "--profile",
        "wrok",
        "--name",
        "k",
        "--schedule",
        "every 1h",
        "--prompt",
        "hi",
      ]);
      expect(again.stderr).not.toContain("did you mean");
    } finally {
      home.cleanup();
    }
  });
});

describe("svc cron pause/resume/disable/remove/run/list --profile of a job that is not there", {
  timeout: 30_000,
}, () => {
  it("refuses (exit 2) without making the profile's directory, naming the profile one or two letters away", async () => {
    const home = tempHome();
    try {
      home.write("profiles/work/skills/.keep", "");
      const store = join(home.dir, "profiles", "wrok", "cron", "jobs.json");
      for (const command of ["pause", "resume", "disable", "remove", "run"]) {
        const refused = await svc(home, ["cron", command, "nightly", "--profile", "wrok"]);
        expect(refused.code).toBe(2);
        expect(refused.stderr).toBe(
          `svc: cron job "nightly" not found in ${store} — see \`svc cron list --profile wrok\` for ids and names (profile wrok has no directory — did you mean work? --profile work)\n`,
        );
      }
      const listed = await svc(home, ["cron", "list", "--profile", "wrok"]);
      expect(listed.code).toBe(0);
      expect(listed.stdout).toBe(
        "No cron jobs in profile wrok, which has no directory — did you mean work? svc cron list --profile work\n",
      );
      // No new profile was left behind, so a later create still says it is one.
      expect(existsSync(join(home.dir, "profiles", "wrok"))).toBe(false);
      const unknownHere = await svc(home, ["cron", "pause", "nightly"]);
      expect(unknownHere.code).toBe(2);
      expect(existsSync(join(home.dir, "cron"))).toBe(false);
    } finally {
      home.cleanup();
    }
  });
});
