import { afterEach, describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { type Foreground, killIfRunning, stoppingWithRun, svc } from "./svc.js";

/** `svc gateway start` while the gateway stops (a restart: `svc gateway stop &`, then start): it drains its runs. */
describe("svc gateway start while the gateway stops", { timeout: 60_000 }, () => {
  let home: TempHome;
  let gateway: Foreground | undefined;
  afterEach(async () => {
    await killIfRunning(gateway);
    gateway = undefined;
    home.cleanup();
  });

  it("says it is stopping and to start it once it has stopped, not to stop it (exit 2, nothing started)", async () => {
    home = tempHome();
    ({ gateway } = await stoppingWithRun(home));
    const res = await svc(home, ["gateway", "start"]);
    expect(res.code).toBe(2);
    expect(res.stdout).toBe("");
    expect(res.stderr).toMatch(
      new RegExp(
        `^svc: the gateway is stopping \\(pid ${gateway.child.pid}, since \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\): its runs in flight finish first, or are kept for the next start — once it has stopped \\(svc gateway status says not running\\), start it again\\n$`,
      ),
    );
    expect(res.stderr).not.toContain("stop it with svc gateway stop");
    // The foreground start (a supervisor's restart) is told the same.
    const run = await svc(home, ["gateway", "run", "--port", "0"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      new RegExp(
        `^svc: the gateway is stopping \\(pid ${gateway.child.pid}, since [^)]+\\): .* start it again\\n$`,
      ),
    );
  });
});
