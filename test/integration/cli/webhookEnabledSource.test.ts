import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, svc } from "./svc.js";

/** WEBHOOK_ENABLED (environment, then .env) overrides config.yaml: a refusal names where the false came from. */
describe("svc gateway run with the webhook adapter switched off and nothing else to run", () => {
  let home: TempHome;
  afterEach(() => home.cleanup());

  it("by WEBHOOK_ENABLED in the environment, with no config file: names the variable, not a config.yaml that does not exist", async () => {
    home = tempHome();
    const res = await svc(home, ["gateway", "run"], { env: { WEBHOOK_ENABLED: "false" }, timeoutMs: 20_000 });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("svc: environment variable WEBHOOK_ENABLED is false");
    expect(res.stderr).toContain("WEBHOOK_ENABLED=true in the environment");
    expect(res.stderr).not.toContain("config.yaml:");
  });

  it("by WEBHOOK_ENABLED in .env over enabled: true in config.yaml: names the .env line and says it wins", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig()));
    const envFile = home.write(".env", "# switched off for now\nexport WEBHOOK_ENABLED=no\n");
    const res = await svc(home, ["gateway", "run"], { timeoutMs: 20_000 });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`svc: ${envFile}: WEBHOOK_ENABLED is false`);
    expect(res.stderr).toContain(`WEBHOOK_ENABLED=true in ${envFile} (it overrides config.yaml)`);
  });
});
