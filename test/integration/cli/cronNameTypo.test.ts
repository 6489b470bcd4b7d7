import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

/** A job's name misspelt (`nightyl` for `nightly`) was refused without naming the job meant. */
describe("svc cron run/pause/... of a misspelt job name", { timeout: 60_000 }, () => {
  it("names the job meant; a name like none of them is refused as before", async () => {
    home = tempHome();
    const created = await svc(home, [
      "cron",
      "create",
      "--name",
      "nightly",
      "--schedule",
      "@daily",
      "--prompt",
      "summarize the day",
    ]);
    expect(created.code).toBe(0);
    const store = join(home.dir, "cron", "jobs.json");
    for (const command of ["run", "pause", "resume", "disable", "remove"]) {
      const answer = await svc(home, ["cron", command, "nightyl"]);
      expect(answer.code).toBe(2);
      expect(answer.stderr).toBe(
        `svc: cron job "nightyl" not found in ${store} — did you mean nightly? (see \`svc cron list\` for ids and names)\n`,
      );
    }
    // svc webhook subscribe --cron-job with the same typo: named, not offered as a job to create.
    const fire = await svc(home, ["webhook", "subscribe", "fire", "--cron-job", "nightyl"]);
    expect(fire.code).toBe(2);
    expect(fire.stderr).toContain(
      `--cron-job nightyl: no such cron job (${store}) — did you mean nightly? (--cron-job nightly; svc cron list shows the jobs)`,
    );
    expect(fire.stderr).not.toContain("svc cron create");
    const other = await svc(home, ["cron", "run", "weekly-report"]);
    expect(other.stderr).toBe(
      `svc: cron job "weekly-report" not found in ${store} — see \`svc cron list\` for ids and names\n`,
    );
  });
});
