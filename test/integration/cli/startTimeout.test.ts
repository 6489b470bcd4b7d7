import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { alive } from "../../helpers/process.js";
import { cliConfig, svc } from "./svc.js";

let home: TempHome;
afterEach(async () => {
  await svc(home, ["gateway", "stop"]);
  home.cleanup();
});

describe("svc gateway start --timeout that runs out", { timeout: 90_000 }, () => {
  it("exits 1 and leaves no gateway running (it was not left to come up unnoticed after the failure)", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig()));
    // Loading the gateway's modules alone takes longer than this.
    const res = await svc(home, ["gateway", "start", "--timeout", "0.05"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/did not answer \/health within 0\.05s, so it was stopped/);
    expect(res.stderr).toContain("svc gateway start --timeout <seconds>");
    // The process it started is gone by the time start returns, so no gateway can come up later.
    const pid = Number(/the gateway \(pid (\d+)\)/.exec(res.stderr)?.[1]);
    expect(pid).toBeGreaterThan(0);
    expect(alive(pid)).toBe(false);
    expect((await svc(home, ["gateway", "status"])).code).toBe(3);
  });
});
