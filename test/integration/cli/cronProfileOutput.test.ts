import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, svc } from "./svc.js";

/**
 * Two teams, one job name each (docs/cli.md, cron): what `pause`, `resume`, `disable` and `remove` changed
 * says which profile's job it was, as `create` does, so a forgotten `--profile` shows in the output.
 */
describe("svc cron commands on a named profile's job name the profile", { timeout: 60_000 }, () => {
  let home: TempHome;
  beforeAll(async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig({})));
    for (const profile of [[], ["--profile", "work"]]) {
      const create = [
        "cron",
        "create",
        "--name",
        "nightly",
        "--schedule",
        "@daily",
        "--prompt",
        "p",
        ...profile,
      ];
      expect((await svc(home, create)).code).toBe(0);
    }
  });
  afterAll(() => home.cleanup());

  it("pause, resume, disable and remove say 'in profile work'; the default profile's say no profile", async () => {
    const work = ["--profile", "work"];
    expect((await svc(home, ["cron", "pause", "nightly", ...work])).stdout).toMatch(
      /^Cron job [0-9a-f]{8} \(nightly\) in profile work is now paused\n$/,
    );
    expect((await svc(home, ["cron", "resume", "nightly", ...work])).stdout).toMatch(
      /^Cron job [0-9a-f]{8} \(nightly\) in profile work is now enabled; next run /,
    );
    expect((await svc(home, ["cron", "disable", "nightly", ...work])).stdout).toMatch(
      /^Cron job [0-9a-f]{8} \(nightly\) in profile work is now disabled\n$/,
    );
    expect((await svc(home, ["cron", "remove", "nightly", ...work])).stdout).toMatch(
      /^Removed cron job [0-9a-f]{8} \(nightly\) in profile work\n$/,
    );
    expect((await svc(home, ["cron", "pause", "nightly"])).stdout).toMatch(
      /^Cron job [0-9a-f]{8} \(nightly\) is now paused\n$/,
    );
    expect((await svc(home, ["cron", "remove", "nightly"])).stdout).toMatch(
      /^Removed cron job [0-9a-f]{8} \(nightly\)\n$/,
    );
  });
});
