import { afterAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, svc } from "./svc.js";

let home: TempHome;
afterAll(async () => {
  await svc(home, ["gateway", "stop"]);
  home.cleanup();
});

describe("svc gateway with no subcommand starts the gateway (spec 4.3: `svc gateway` (start; ...))", {
  timeout: 90_000,
}, () => {
  it("starts it in the background like svc gateway start, taking its options; stop stops it", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig()));
    const started = await svc(home, ["gateway", "--timeout", "60"]);
    expect(started.code).toBe(0);
    expect(started.stdout).toMatch(/Gateway started: pid \d+, listening on 127\.0\.0\.1:\d+/);
    const status = await svc(home, ["gateway", "status"]);
    expect(status).toMatchObject({ code: 0, stdout: expect.stringContaining("Health: ok") });
    expect((await svc(home, ["gateway", "stop"])).stdout).toContain("Gateway stopped");
  });
});
