import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
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
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect((await svc(home, ["gateway", "status"])).code).toBe(3);
  });
});
