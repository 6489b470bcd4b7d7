import { existsSync } from "node:fs";
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
