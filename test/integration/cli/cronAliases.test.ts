import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, svc } from "./svc.js";

describe("svc cron short and alternative command names (ls, enable, unpause, rm)", {
  timeout: 60_000,
}, () => {
  let home: TempHome;
  beforeAll(() => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig({})));
  });
  afterAll(() => home.cleanup());
  const jobs = (): Array<Record<string, unknown>> =>
    Object.values(JSON.parse(readFileSync(join(home.dir, "cron", "jobs.json"), "utf8")).jobs);

  it("enable and unpause resume a job (not 'Did you mean disable/pause?'); ls lists; rm removes", async () => {
    const create = ["cron", "create", "--name", "nightly-digest", "--schedule", "@daily", "--prompt", "p"];
    expect((await svc(home, create)).code).toBe(0);
    expect((await svc(home, ["cron", "disable", "nightly-digest"])).code).toBe(0);
    expect(jobs()[0]?.state).toBe("disabled");
    const enabled = await svc(home, ["cron", "enable", "nightly-digest"]);
    expect(enabled.stderr).not.toMatch(/Did you mean/);
    expect(enabled.code).toBe(0);
    expect(enabled.stdout).toContain("is now enabled");
    expect(jobs()[0]?.state).toBe("enabled");
    expect((await svc(home, ["cron", "pause", "nightly-digest"])).code).toBe(0);
    const unpaused = await svc(home, ["cron", "unpause", "nightly-digest"]);
    expect(unpaused.stderr).not.toMatch(/Did you mean/);
    expect(unpaused.code).toBe(0);
    expect(jobs()[0]?.state).toBe("enabled");
    const listed = await svc(home, ["cron", "ls"]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/nightly-digest\s+@daily\s+enabled/);
    expect((await svc(home, ["cron", "rm", "nightly-digest"])).code).toBe(0);
    expect(jobs()).toEqual([]);
  });
});
