import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { startTestRedis } from "../../helpers/redis.js";
import { createCronJob, homeFiringNightly } from "./cronJobRoutes.js";
import { svc } from "./svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

describe("svc cron remove of a job that webhook routes fire", { timeout: 90_000 }, () => {
  it("removes it and warns which static routes and subscriptions of that profile now drop their events", async () => {
    home = await homeFiringNightly();
    const create = (name: string) => createCronJob(home, name);
    const removed = await svc(home, ["cron", "remove", "nightly"]);
    expect(removed.code).toBe(0);
    expect(removed.stderr).toContain(
      "Warning: route st (config.yaml), subscription dyn fire this job (cron_job): their events are now logged and dropped",
    );
    // Each kind of route is changed where it lives: config.yaml by hand, a subscription with the CLI.
    expect(removed.stderr).toContain(
      "(edit platforms.webhook.routes.<name>.cron_job in config.yaml; svc webhook subscribe <name> --no-cron-job)",
    );
    expect(removed.stderr).not.toContain("other");
    // A job nothing fires is removed without a warning.
    await create("solo");
    expect((await svc(home, ["cron", "remove", "solo"])).stderr).toBe("");
  });

  it("with state.backend: redis, names the subscriptions kept in Redis (the store the gateways serve)", async () => {
    const redis = await startTestRedis();
    try {
      home = tempHome();
      home.write(
        "config.yaml",
        stringify({
          platforms: { webhook: { enabled: true, host: "127.0.0.1" } },
          state: { backend: "redis", redis_url: redis.url },
        }),
      );
      const created = await svc(home, [
        "cron",
        "create",
        "--name",
        "nightly",
        "--schedule",
        "every 1h",
        "--prompt",
        "x",
      ]);
      expect(created.code).toBe(0);
      expect((await svc(home, ["webhook", "subscribe", "dyn", "--cron-job", "nightly"])).code).toBe(0);
      // The subscription is in Redis, not in a local file a local read could have found.
      expect(existsSync(join(home.dir, "webhook_subscriptions.json"))).toBe(false);
      const removed = await svc(home, ["cron", "remove", "nightly"]);
      expect(removed.code).toBe(0);
      expect(removed.stderr).toContain("Warning: subscription dyn fires this job (cron_job)");
    } finally {
      await redis.cleanup();
    }
  });

  it("with Redis unreachable, removes it and says the subscriptions could not be checked, naming the URL without its password", async () => {
    const redis = await startTestRedis();
    try {
      const admin = new Redis(redis.url);
      await admin.config("SET", "requirepass", "pw-never-shown");
      admin.disconnect();
      home = tempHome();
      const url = `redis://:pw-never-shown@127.0.0.1:${redis.port}/0`;
      home.write(
        "config.yaml",
        stringify({
          platforms: { webhook: { enabled: true, host: "127.0.0.1" } },
          state: { backend: "redis", redis_url: url },
        }),
      );
      const create = ["cron", "create", "--name", "nightly", "--schedule", "every 1h", "--prompt", "x"];
      expect((await svc(home, create)).code).toBe(0);
      expect((await svc(home, ["webhook", "subscribe", "dyn", "--cron-job", "nightly"])).code).toBe(0);
      await redis.stop();
      const removed = await svc(home, ["cron", "remove", "nightly"]);
      expect(removed.code).toBe(0);
      expect(removed.stdout).toContain("Removed cron job");
      expect(removed.stderr).toContain(
        `Warning: the dynamic subscriptions were not checked for one that fires this job (cron_job): ${join(home.dir, "config.yaml")}: state.redis_url: cannot reach redis://127.0.0.1:${redis.port}/0`,
      );
      expect(removed.stderr).toContain("svc webhook list shows them once they can be read");
      expect(removed.stderr).not.toContain("pw-never-shown");
    } finally {
      await redis.cleanup();
    }
  });
});

/** Copies job `name` of `home`'s default store in the file by hand, under `id`, after the others. */
function copyJob(home: TempHome, name: string, id: string, change: Record<string, unknown> = {}): void {
  const path = join(home.dir, "cron", "jobs.json");
  const file = JSON.parse(readFileSync(path, "utf8")) as { jobs: Record<string, { name: string }> };
  const original = Object.values(file.jobs).find((job) => job.name === name);
  file.jobs[id] = { ...original, id, ...change } as { name: string };
  writeFileSync(path, JSON.stringify(file, null, 2));
}

describe("svc cron remove / pause of a job whose name another job has too (copied in the file by hand)", {
  timeout: 90_000,
}, () => {
  it("names no route that still fires a job: one naming the name fires the first in the file, before and after", async () => {
    home = await homeFiringNightly();
    copyJob(home, "nightly", "c0ffee00");
    // The routes name nightly, the first job of the name: pausing the copy leaves them firing it.
    const paused = await svc(home, ["cron", "pause", "c0ffee00"]);
    expect(paused.code).toBe(0);
    expect(paused.stderr).not.toContain("Warning");
    expect((await svc(home, ["cron", "resume", "c0ffee00"])).code).toBe(0);
    // A subscription naming the copy by its id is named, with the copy's id to resume (nightly is the other).
    expect((await svc(home, ["webhook", "subscribe", "byid", "--cron-job", "c0ffee00"])).code).toBe(0);
    expect((await svc(home, ["cron", "disable", "c0ffee00"])).stderr).toBe(
      "Warning: subscription byid fires this job (cron_job): its events are now logged and dropped without a run (still answered 202 accepted) until svc cron resume c0ffee00\n",
    );
    expect((await svc(home, ["cron", "resume", "c0ffee00"])).code).toBe(0);
    // Removing the first, the routes fire the copy, enabled.
    const removed = await svc(home, ["cron", "remove", "nightly"]);
    expect(removed.code).toBe(0);
    expect(removed.stdout).toContain("Removed cron job");
    expect(removed.stderr).not.toContain("Warning");
    // Now the one of its name: pausing it is warned about as before.
    expect((await svc(home, ["cron", "pause", "c0ffee00"])).stderr).toBe(
      "Warning: route st (config.yaml), subscription dyn, subscription byid fire this job (cron_job): their events are now logged and dropped without a run (still answered 202 accepted) until svc cron resume nightly\n",
    );
  });

  it("names the routes a removal takes to a paused copy of the name, with how to resume that one", async () => {
    home = await homeFiringNightly();
    copyJob(home, "nightly", "c0ffee00", { state: "paused" });
    const removed = await svc(home, ["cron", "remove", "nightly"]);
    expect(removed.code).toBe(0);
    expect(removed.stderr).toBe(
      "Warning: route st (config.yaml), subscription dyn fired this job (cron_job) by its name, nightly, which now names job c0ffee00 (paused): their events are now logged and dropped without a run (still answered 202 accepted) until svc cron resume c0ffee00\n",
    );
  });
});

describe("svc webhook subscribe / list of a subscription firing a paused copy of a job's name by its id", {
  timeout: 90_000,
}, () => {
  it("says to resume the copy by its id: its name resumes the first job of that name, not the one fired", async () => {
    home = await homeFiringNightly();
    copyJob(home, "nightly", "c0ffee00", { state: "paused" });
    const subscribed = await svc(home, ["webhook", "subscribe", "fire2", "--cron-job", "c0ffee00"]);
    expect(subscribed.code).toBe(0);
    expect(subscribed.stderr).toContain(
      "Warning: cron job nightly (c0ffee00) is paused: events are logged and dropped until svc cron resume c0ffee00\n",
    );
    const listed = await svc(home, ["webhook", "list"]);
    expect(listed.stdout + listed.stderr).toContain(
      "Note: fire2 fires cron job c0ffee00, which is paused (svc cron resume c0ffee00)",
    );
  });
});
