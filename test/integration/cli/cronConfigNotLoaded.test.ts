import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { TempHome } from "../../helpers/home.js";
import { homeFiringNightly } from "./cronJobRoutes.js";
import { svcEach } from "./svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

describe("svc cron with a config.yaml that does not load", { timeout: 90_000 }, () => {
  it("create, pause and remove do their work and say, in one line, which check the file was needed for", async () => {
    // Routes st (config.yaml) and the subscription dyn fire nightly; then a key breaks the file.
    home = await homeFiringNightly();
    const config = join(home.dir, "config.yaml");
    home.write("config.yaml", `${readFileSync(config, "utf8")}bogus_key: 1\n`);
    // Its first problem, without the advice svc config check gives with it.
    const notLoaded = `Warning: ${config} could not be loaded ((top level): unknown key "bogus_key")`;
    const [created, paused, removed] = await svcEach(home, [
      ["cron", "create", "--name", "tg", "--schedule", "every 1h", "--prompt", "x", "--deliver", "telegram"],
      ["cron", "pause", "nightly"],
      ["cron", "remove", "nightly"],
    ]);
    expect(created.code).toBe(0);
    expect(created.stdout).toContain("Created cron job");
    expect(created.stderr).toBe(`${notLoaded}: the job's target (telegram) was not checked\n`);
    const routes =
      "whether a webhook route (config.yaml's or a subscription) fires this job (cron_job) was not checked";
    for (const result of [paused, removed]) {
      expect(result.code).toBe(0);
      expect(result.stderr).toBe(`${notLoaded}: ${routes}\n`);
    }
    expect(paused.stdout).toContain("is now paused");
    expect(removed.stdout).toContain("Removed cron job");
  });

  it("a file with several problems is named by its first, with how many more", async () => {
    home = await homeFiringNightly();
    const config = join(home.dir, "config.yaml");
    home.write(
      "config.yaml",
      `${readFileSync(config, "utf8")}bogus_key: 1\nagent:\n  max_concurrent_runs: many\n`,
    );
    const [removed] = await svcEach(home, [["cron", "remove", "nightly"]]);
    expect(removed.code).toBe(0);
    expect(removed.stderr).toMatch(
      /^Warning: \S+ could not be loaded \(agent\.max_concurrent_runs: expected a number, got "many", and 1 more problem\): whether [^\n]*\n$/,
    );
  });
});
