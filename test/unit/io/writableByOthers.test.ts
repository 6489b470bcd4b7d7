import { chmodSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { placesWritableByOthers } from "../../../src/io/writableByOthers.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home.cleanup());

describe("places under SVC_HOME other users may write", () => {
  it("names a named profile's .env, a script in a subdirectory, a skill and a world-writable home", () => {
    home = tempHome();
    const workEnv = home.write("profiles/work/.env", "X=1\n");
    const nested = home.write("scripts/github/triage.sh", "echo {}\n");
    const skill = home.write("profiles/work/skills/review/SKILL.md", "Review.\n");
    const jobs = home.write("cron/jobs.json", "{}\n");
    chmodSync(workEnv, 0o646);
    chmodSync(nested, 0o777);
    chmodSync(skill, 0o666);
    chmodSync(jobs, 0o602);
    chmodSync(home.dir, 0o1777);
    const named = placesWritableByOthers(home.dir).map((line) => line.slice(0, line.indexOf(" (mode")));
    expect(named).toEqual([
      `${home.dir} is a directory other users may write to`,
      `${join(home.dir, "cron", "jobs.json")} is writable by other users`,
      `${nested} is writable by other users`,
      `${workEnv} is writable by other users`,
      `${skill} is writable by other users`,
    ]);
    chmodSync(home.dir, 0o700);
  });

  it("says nothing of absent places, 0600 files and group-writable ones", () => {
    home = tempHome();
    home.write("config.yaml", "platforms: {}\n", 0o660);
    mkdirSync(join(home.dir, "scripts"), { mode: 0o770 });
    chmodSync(join(home.dir, "scripts"), 0o770);
    home.write(".env", "X=1\n", 0o600);
    chmodSync(join(home.dir, "config.yaml"), 0o660);
    expect(placesWritableByOthers(home.dir)).toEqual([]);
  });
});
