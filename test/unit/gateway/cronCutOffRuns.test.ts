import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { recordCutOffRuns } from "../../../src/gateway/cron.js";
import { createProfileResources } from "../../../src/gateway/profileResources.js";
import { cronRunNotes, takeCutOffRuns } from "../../../src/io/cronRunNotes.js";
import { silentLogger } from "../../../src/io/log.js";
import { commandOptions, connectRedis, createRedisHealth } from "../../../src/io/state/redis/connection.js";
import { createCronLease } from "../../../src/io/state/redis/cronLease.js";
import { redisKeys } from "../../../src/io/state/redis/keys.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { startTestRedis } from "../../helpers/redis.js";

let home: TempHome;
afterEach(() => home?.cleanup());

const NOW = Date.parse("2026-11-22T12:00:00.000Z");
const clock = { now: () => NOW, setTimeout: () => 0, clearTimeout: () => {} };

/** A note as a gateway that is gone (no process has this pid) left it. */
function deadNote(dir: string, name: string, note: Record<string, unknown>): void {
  mkdirSync(dir, { recursive: true });
  symlinkSync(JSON.stringify({ owner: [2 ** 22 + 12345, "1"], ...note }), join(dir, name));
}

const job = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  name: `job-${id}`,
  schedule: "every 1h",
  prompt: "p",
  deliver: "log",
  state: "enabled",
  next_run: "2026-11-22T13:00:00.000Z",
  created_at: "2026-11-01T00:00:00.000Z",
  ...extra,
});

describe("scheduled cron runs a killed gateway cut off", () => {
  it("are taken from the notes of a process that is gone (not of one still running) and recorded in last_run, said once each", async () => {
    home = tempHome();
    const dir = join(home.dir, "state", "cron-runs");
    home.write(
      "cron/jobs.json",
      JSON.stringify({
        jobs: {
          a1: job("a1", { last_run: { at: "2026-11-22T10:00:00.000Z", status: "ok", trigger: "schedule" } }),
          // Recorded since the run started (its gateway's stop recorded it after all): kept as it is.
          b2: job("b2", {
            last_run: { at: "2026-11-22T11:30:00.000Z", status: "error", trigger: "schedule" },
          }),
        },
      }),
    );
    const startedAt = Date.parse("2026-11-22T11:00:00.000Z");
    deadNote(dir, "1-1", { profile: "default", jobId: "a1", trigger: "schedule", startedAt });
    deadNote(dir, "1-2", { profile: "default", jobId: "b2", trigger: "schedule", startedAt });
    // A profile removed since: nothing is recorded, and its directory is not made again.
    deadNote(dir, "1-3", { profile: "gone", jobId: "c3", trigger: "schedule", startedAt });
    deadNote(dir, "1-4", { not: "a note" });
    // This process's own run, still going on.
    cronRunNotes(dir).started({ profile: "default", jobId: "a1", trigger: "schedule", startedAt: NOW });
    const log = captureLogger();
    const runs = takeCutOffRuns(dir);
    expect(runs.map((run) => run.jobId).sort()).toEqual(["a1", "b2", "c3"]);
    await recordCutOffRuns(
      { logger: log.logger, clock, profiles: createProfileResources(home.dir, silentLogger(), clock.now) },
      runs,
    );
    const jobs = JSON.parse(readFileSync(join(home.dir, "cron", "jobs.json"), "utf8")).jobs;
    expect(jobs.a1.last_run).toEqual({
      at: "2026-11-22T12:00:00.000Z",
      status: "error",
      trigger: "schedule",
      error: "cut off: the gateway running it was killed (the run started at 2026-11-22T11:00:00.000Z)",
    });
    expect(jobs.b2.last_run.at).toBe("2026-11-22T11:30:00.000Z");
    expect(existsSync(join(home.dir, "profiles", "gone"))).toBe(false);
    expect(log.messages()).toEqual([
      "[cron] job-a1: its scheduled run (started 2026-11-22T11:00:00.000Z) did not finish — the gateway running it was killed; recorded in last_run as an error and not run again (the job runs at its next scheduled time)",
    ]);
    // Taken once: the live process's own note stays, the others are gone.
    expect(takeCutOffRuns(dir)).toEqual([]);
  });

  it("with their occurrence noted: recorded interrupted and due again, unless next_run was edited since; a catch-up cut off again is an error", async () => {
    home = tempHome();
    const dir = join(home.dir, "state", "cron-runs");
    const occurrence = { dueRun: "2026-11-22T11:00:00.000Z", advancedTo: "2026-11-22T12:00:00.000Z" };
    home.write(
      "cron/jobs.json",
      JSON.stringify({
        jobs: {
          a1: job("a1", { next_run: occurrence.advancedTo }),
          // Its next_run edited while the gateway was down: recorded, not put back.
          b2: job("b2", { next_run: "2026-11-23T00:00:00.000Z" }),
          // A catch-up: the occurrence was interrupted already (recorded after it came due).
          c3: job("c3", {
            next_run: occurrence.advancedTo,
            last_run: { at: "2026-11-22T11:10:00.000Z", status: "interrupted", trigger: "schedule" },
          }),
        },
      }),
    );
    const startedAt = Date.parse("2026-11-22T11:20:00.000Z");
    for (const id of ["a1", "b2", "c3"])
      deadNote(dir, `1-${id}`, {
        profile: "default",
        jobId: id,
        trigger: "schedule",
        startedAt,
        ...occurrence,
      });
    const log = captureLogger();
    await recordCutOffRuns(
      { logger: log.logger, clock, profiles: createProfileResources(home.dir, silentLogger(), clock.now) },
      takeCutOffRuns(dir),
    );
    const jobs = JSON.parse(readFileSync(join(home.dir, "cron", "jobs.json"), "utf8")).jobs;
    const interrupted = { at: "2026-11-22T12:00:00.000Z", status: "interrupted", trigger: "schedule" };
    expect(jobs.a1).toMatchObject({ last_run: interrupted, next_run: occurrence.dueRun });
    expect(jobs.b2).toMatchObject({ last_run: interrupted, next_run: "2026-11-23T00:00:00.000Z" });
    expect(jobs.c3.next_run).toBe(occurrence.advancedTo);
    expect(jobs.c3.last_run).toMatchObject({
      status: "error",
      error:
        "cut off: the gateway running it was killed (the run started at 2026-11-22T11:20:00.000Z); it was the catch-up of a run interrupted before",
    });
    // (Notes of one start time are taken in directory order.)
    expect(
      log
        .messages()
        .map((m) => m.replace(/^.*was killed; /, ""))
        .sort(),
    ).toEqual([
      "recorded in last_run as an error and not run again (the job runs at its next scheduled time)",
      "recorded in last_run as interrupted, and it runs again now, as a missed run does (once: cut off again, it is not run a third time)",
      "recorded in last_run as interrupted; not run again, as its next_run was changed since (the job runs at its next_run)",
    ]);
  });

  it("with state.backend: redis: the due time the killed process claimed is given back by the holder its note names, and its occurrence caught up as with local; a claim another instance holds since, or one noted without its holder, is not (an error, not run again)", async () => {
    home = tempHome();
    const server = await startTestRedis();
    const redis = await connectRedis(server.url, "config.yaml", commandOptions());
    try {
      const dir = join(home.dir, "state", "cron-runs");
      const occurrence = { dueRun: "2026-11-22T11:00:00.000Z", advancedTo: "2026-11-22T12:00:00.000Z" };
      const dueAt = occurrence.dueRun;
      home.write(
        "cron/jobs.json",
        JSON.stringify({
          jobs: Object.fromEntries(
            ["a1", "b2", "c3"].map((id) => [id, job(id, { next_run: occurrence.advancedTo })]),
          ),
        }),
      );
      const keys = redisKeys("cutoff");
      const health = createRedisHealth("test", silentLogger());
      // The killed process's claims, another instance's, and this start's.
      const killed = createCronLease(redis, keys, health);
      const other = createCronLease(redis, keys, health);
      const restarted = createCronLease(redis, keys, health);
      expect(await killed.claim("default", "a1", dueAt)).toBe(true);
      // The killed process's claim lapsed, and another instance took the due time since.
      expect(await other.claim("default", "b2", dueAt)).toBe(true);
      // Noted without its holder.
      expect(await killed.claim("default", "c3", dueAt)).toBe(true);
      const startedAt = Date.parse("2026-11-22T11:00:01.000Z");
      const note = (jobId: string, claim: Record<string, unknown>) =>
        deadNote(dir, `1-${jobId}`, {
          profile: "default",
          jobId,
          trigger: "schedule",
          startedAt,
          ...occurrence,
          ...claim,
        });
      note("a1", { claimedDueAt: dueAt, claimHolder: killed.holder });
      note("b2", { claimedDueAt: dueAt, claimHolder: killed.holder });
      note("c3", { claimedDueAt: dueAt });
      const log = captureLogger();
      await recordCutOffRuns(
        {
          logger: log.logger,
          clock,
          profiles: createProfileResources(home.dir, silentLogger(), clock.now),
          releaseClaim: restarted.releaseHeld,
        },
        takeCutOffRuns(dir),
      );
      const jobs = JSON.parse(readFileSync(join(home.dir, "cron", "jobs.json"), "utf8")).jobs;
      expect(jobs.a1).toMatchObject({
        last_run: { at: "2026-11-22T12:00:00.000Z", status: "interrupted", trigger: "schedule" },
        next_run: dueAt,
      });
      // Given back: this start claims the due time for its catch-up.
      expect(await restarted.claim("default", "a1", dueAt)).toBe(true);
      for (const id of ["b2", "c3"]) {
        expect(jobs[id].next_run).toBe(occurrence.advancedTo);
        expect(jobs[id].last_run).toMatchObject({
          status: "error",
          error: "cut off: the gateway running it was killed (the run started at 2026-11-22T11:00:01.000Z)",
        });
        // Left with whoever holds it.
        expect(await restarted.claim("default", id, dueAt)).toBe(false);
      }
      expect(log.messages().filter((m) => m.includes("it runs again now"))).toHaveLength(1);
    } finally {
      redis.disconnect();
      await server.cleanup();
    }
  });

  it("with state.backend: redis: the next due time the killed process held ahead while its run went on is given back too, when still to come; another instance's hold is not", async () => {
    home = tempHome();
    const server = await startTestRedis();
    const redis = await connectRedis(server.url, "config.yaml", commandOptions());
    try {
      const dir = join(home.dir, "state", "cron-runs");
      const occurrence = { dueRun: "2026-11-22T11:00:00.000Z", advancedTo: "2026-11-22T13:00:00.000Z" };
      home.write(
        "cron/jobs.json",
        JSON.stringify({
          jobs: Object.fromEntries(
            ["a1", "b2"].map((id) => [id, job(id, { next_run: occurrence.advancedTo })]),
          ),
        }),
      );
      const keys = redisKeys("held-ahead");
      const health = createRedisHealth("test", silentLogger());
      const killed = createCronLease(redis, keys, health);
      const other = createCronLease(redis, keys, health);
      const restarted = createCronLease(redis, keys, health);
      for (const id of ["a1", "b2"]) expect(await killed.claim("default", id, occurrence.dueRun)).toBe(true);
      expect(await killed.claim("default", "a1", occurrence.advancedTo, true)).toBe(true);
      // b2's next due time is held by another instance's run.
      expect(await other.claim("default", "b2", occurrence.advancedTo, true)).toBe(true);
      for (const jobId of ["a1", "b2"])
        deadNote(dir, `1-${jobId}`, {
          profile: "default",
          jobId,
          trigger: "schedule",
          startedAt: Date.parse("2026-11-22T11:00:01.000Z"),
          ...occurrence,
          claimedDueAt: occurrence.dueRun,
          claimHolder: killed.holder,
        });
      await recordCutOffRuns(
        {
          logger: silentLogger(),
          clock,
          profiles: createProfileResources(home.dir, silentLogger(), clock.now),
          releaseClaim: restarted.releaseHeld,
        },
        takeCutOffRuns(dir),
      );
      expect(await restarted.claim("default", "a1", occurrence.advancedTo)).toBe(true);
      expect(await restarted.claim("default", "b2", occurrence.advancedTo)).toBe(false);
    } finally {
      redis.disconnect();
      await server.cleanup();
    }
  });

  it("are noted after the directory was removed while the gateway ran (rm -rf state/): it is made again", () => {
    home = tempHome();
    const dir = join(home.dir, "state", "cron-runs");
    const notes = cronRunNotes(dir);
    notes.started({ profile: "default", jobId: "a1", trigger: "schedule", startedAt: NOW });
    rmSync(join(home.dir, "state"), { recursive: true, force: true });
    notes.started({ profile: "default", jobId: "b2", trigger: "schedule", startedAt: NOW + 1 });
    expect(readdirSync(dir)).toEqual([`${process.pid}-2`]);
  });
});
