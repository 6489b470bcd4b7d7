import { readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createCronScheduler } from "../../../src/actors/cron.js";
import { type CronJob, cronStore } from "../../../src/io/stores/cronStore.js";
import { unusableCronStore } from "../../../src/io/stores/unusableCronStore.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { emptyInPlace } from "../../helpers/emptyInPlace.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

/** A profile's cron store unreadable or emptied for a while as the gateway runs: what the scheduler says. */

const T0 = Date.parse("2026-11-22T12:00:00Z");
let home: TempHome;
afterEach(() => home?.cleanup());

const hourly = (id: string): CronJob => ({
  id,
  name: `job-${id}`,
  schedule: "@hourly",
  prompt: "p",
  deliver: "log",
  deliver_extra: {},
  state: "enabled",
  next_run: new Date(T0 + 3_600_000).toISOString(),
  created_at: new Date(T0).toISOString(),
});

async function setup(ids: string[]) {
  home = tempHome();
  const store = cronStore(join(home.dir, "cron", "jobs.json"));
  await store.update((records) => {
    for (const id of ids) records[id] = hourly(id);
  });
  const log = captureLogger();
  let now = T0;
  const scheduler = createCronScheduler({
    stores: {
      profiles: () => ["default"],
      store: () => store,
      unusable: (profile) => unusableCronStore(home.dir, profile),
    },
    runJob: async () => "ok",
    logger: log.logger,
    clock: { now: () => now, setTimeout: () => 0, clearTimeout: () => {} },
  });
  /** Checks every half hour for `hours` (the scheduler checks each second; each check finds the same). */
  const checkFor = async (hours: number) => {
    for (const end = now + hours * 3_600_000; now < end; now += 1_800_000) {
      await scheduler.tick();
      await scheduler.idle();
    }
  };
  return { path: store.path, log, scheduler, checkFor };
}

const missedLines = (messages: string[]) => messages.filter((m) => m.includes("missed"));

describe("cron store gaps", () => {
  it("runs missed while the store could not be read are said as missed for that, not for a gateway that was down", async () => {
    const { path, log, scheduler, checkFor } = await setup(["a"]);
    expect(await scheduler.tick()).toEqual([]);
    const good = readFileSync(path, "utf8");
    writeFileSync(path, good.slice(0, 40)); // torn: not valid JSON
    await checkFor(6);
    writeFileSync(path, good);
    expect(await scheduler.tick()).toEqual(["a"]);
    await scheduler.idle();
    expect(log.messages().filter((m) => m.includes("not valid JSON"))).toHaveLength(1);
    expect(missedLines(log.messages())).toEqual([
      `[cron] job-a: 6 scheduled runs were missed since ${new Date(T0 + 3_600_000).toISOString()} while ${path} could not be read; they are not run one by one — one catch-up run now, then the schedule goes on`,
    ]);
  });

  it("a cron directory that became a link to nothing is a store that cannot be read (ERROR, once), not one without jobs; the runs missed meanwhile are said as missed for it", async () => {
    const { path, log, scheduler, checkFor } = await setup(["a"]);
    expect(await scheduler.tick()).toEqual([]);
    const cron = join(home.dir, "cron");
    renameSync(cron, join(home.dir, "cron-real"));
    symlinkSync(join(home.dir, "gone"), cron);
    await checkFor(6);
    const lines = log.lines().map((line) => JSON.parse(line) as { level: number; msg: string });
    // Seen: nothing at all, the jobs read through the link as none.
    expect(lines.filter(({ level }) => level >= 40)).toEqual([
      expect.objectContaining({
        level: 50,
        msg: `[cron] ${cron}: a symbolic link to ${home.dir}/gone, which is not a directory (missing or moved) — the default profile's cron jobs cannot be kept there: restore the directory it points to, or remove the link (svc makes the directory)`,
      }),
    ]);
    rmSync(cron);
    renameSync(join(home.dir, "cron-real"), cron);
    expect(await scheduler.tick()).toEqual(["a"]);
    await scheduler.idle();
    // Seen: "… were missed since <time> (the gateway was not running, or its clock stepped forward)".
    expect(missedLines(log.messages())).toEqual([
      `[cron] job-a: 6 scheduled runs were missed since ${new Date(T0 + 3_600_000).toISOString()} while ${path} could not be read; they are not run one by one — one catch-up run now, then the schedule goes on`,
    ]);
  });

  it("a cron directory that became a link into a loop of links is named as one (ERROR, once), not a bare ELOOP", async () => {
    const { log, scheduler, checkFor } = await setup(["a"]);
    expect(await scheduler.tick()).toEqual([]);
    const cron = join(home.dir, "cron");
    renameSync(cron, join(home.dir, "cron-real"));
    // cron -> loopdir/cron, loopdir -> loopdir. Seen: "[cron] <home>/cron/jobs.json: cannot be read (ELOOP …)".
    symlinkSync("loopdir", join(home.dir, "loopdir"));
    symlinkSync("loopdir/cron", cron);
    await checkFor(2);
    const lines = log.lines().map((line) => JSON.parse(line) as { level: number; msg: string });
    expect(lines.filter(({ level }) => level >= 40)).toEqual([
      expect.objectContaining({
        level: 50,
        msg: `[cron] ${cron}: a symbolic link into a loop of links, or a chain of more than 40 — the default profile's cron jobs cannot be kept there: point the link at a directory, or remove the link (svc makes the directory)`,
      }),
    ]);
  });

  it("jobs that vanish through an emptied jobs.json are said (WARN, once, with their count); the runs missed meanwhile are said as missed for it", async () => {
    const { path, log, scheduler, checkFor } = await setup(["a", "b"]);
    expect(await scheduler.tick()).toEqual([]);
    const good = readFileSync(path, "utf8");
    emptyInPlace(path);
    await checkFor(6);
    const lines = log.lines().map((line) => JSON.parse(line) as { level: number; msg: string });
    expect(lines.filter(({ msg }) => msg.includes("is empty"))).toEqual([
      expect.objectContaining({
        level: 40,
        msg: `[cron] ${path} is empty: its 2 job(s) are no longer scheduled — restore it from a backup, or create them again with svc cron create`,
      }),
    ]);
    writeFileSync(path, good);
    expect(await scheduler.tick()).toEqual(["a", "b"]);
    await scheduler.idle();
    expect(missedLines(log.messages())).toEqual(
      ["a", "b"].map(
        (id) =>
          `[cron] job-${id}: 6 scheduled runs were missed since ${new Date(T0 + 3_600_000).toISOString()} while ${path} was empty; they are not run one by one — one catch-up run now, then the schedule goes on`,
      ),
    );
  });

  it("a jobs.json that was empty from the start says nothing", async () => {
    const { path, log, scheduler } = await setup([]);
    writeFileSync(path, "");
    expect(await scheduler.tick()).toEqual([]);
    expect(log.messages().filter((m) => m.includes("is empty"))).toEqual([]);
  });
});
