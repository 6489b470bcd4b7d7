import { afterEach, describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { type Foreground, killIfRunning, stoppingWithRun, svc } from "./svc.js";

/** `svc webhook redeliver` while the gateway stops: its listener is closed, but it runs until its runs drain. */
describe("svc webhook redeliver while the gateway stops", { timeout: 60_000 }, () => {
  let home: TempHome;
  let gateway: Foreground | undefined;
  afterEach(async () => {
    await killIfRunning(gateway);
    gateway = undefined;
    home.cleanup();
  });

  it("says the gateway is stopping (exit 1), not that it should be started", async () => {
    home = tempHome();
    const stopping = await stoppingWithRun(home);
    gateway = stopping.gateway;
    const id = stopping.deliveryId;
    const res = await svc(home, ["webhook", "redeliver", id]);
    expect(res.code).toBe(1);
    expect(res.stdout).toBe("");
    expect(res.stderr).toMatch(
      new RegExp(
        `^svc: cannot reach the gateway at http://127\\.0\\.0\\.1:${gateway.port}/webhooks/r \\(.*\\) — the gateway of .* \\(pid ${gateway.child.pid}\\) is stopping \\(since \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\) and takes no new requests — once it has stopped, start it again \\(svc gateway start\\) and run this command again\\n$`,
      ),
    );
    expect(res.stderr).not.toContain("start it with svc gateway start");
  });
});
