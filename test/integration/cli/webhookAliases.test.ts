import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, svc } from "./svc.js";

describe("svc webhook other command names (add, ls, rm, unsubscribe, pause, resume)", {
  timeout: 60_000,
}, () => {
  let home: TempHome;
  beforeAll(() => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig({})));
  });
  afterAll(() => home.cleanup());
  const names = () =>
    Object.keys(JSON.parse(readFileSync(join(home.dir, "webhook_subscriptions.json"), "utf8")));

  it("add subscribes, ls lists, rm removes, as subscribe, list and remove do", async () => {
    const added = await svc(home, ["webhook", "add", "hook", "--prompt", "p"]);
    expect(added.code).toBe(0);
    expect(added.stdout).toMatch(/^Secret: [0-9a-f]{64}$/m);
    expect(names()).toEqual(["hook"]);
    const listed = await svc(home, ["webhook", "ls"]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^hook\s+\(all\)\s+log\s+default\s+yes/m);
    expect((await svc(home, ["webhook", "rm", "hook"])).code).toBe(0);
    expect(names()).toEqual([]);
  });

  it("unsubscribe removes, as remove does (not 'Did you mean subscribe?', which would make it again)", async () => {
    expect((await svc(home, ["webhook", "subscribe", "gone-hook", "--prompt", "p"])).code).toBe(0);
    expect(names()).toEqual(["gone-hook"]);
    const removed = await svc(home, ["webhook", "unsubscribe", "gone-hook"]);
    expect(removed.stderr).not.toMatch(/Did you mean/);
    expect(removed.code).toBe(0);
    expect(removed.stdout).toMatch(/^Removed gone-hook$/m);
    expect(names()).toEqual([]);
  });

  it("pause and resume (svc cron's names) disable and enable, not 'Did you mean remove?'", async () => {
    const enabled = () =>
      JSON.parse(readFileSync(join(home.dir, "webhook_subscriptions.json"), "utf8"))["paused-hook"].enabled;
    expect((await svc(home, ["webhook", "subscribe", "paused-hook", "--prompt", "p"])).code).toBe(0);
    const paused = await svc(home, ["webhook", "pause", "paused-hook"]);
    expect(paused.code).toBe(0);
    expect(enabled()).toBe(false);
    const resumed = await svc(home, ["webhook", "resume", "paused-hook"]);
    expect(resumed.stderr).not.toMatch(/Did you mean/);
    expect(resumed.code).toBe(0);
    expect(enabled()).toBe(true);
    expect(names()).toEqual(["paused-hook"]);
  });
});
