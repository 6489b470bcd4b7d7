import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, type Foreground, killIfRunning, runForeground, svc } from "./svc.js";

/**
 * `svc mcp reload` of a gateway that refuses the reload for its `.env` (left empty mid-save): the command
 * says to fix the file the refusal names, not config.yaml, which is fine.
 */
describe("svc mcp reload refused for the .env", { timeout: 60_000 }, () => {
  let home: TempHome;
  let gateway: Foreground | undefined;
  afterEach(async () => {
    await killIfRunning(gateway);
    gateway = undefined;
    home.cleanup();
  });

  it("names the file to fix, and the refusal's reason", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig({ r: { secret: "s3cret-s3cret" } })), 0o600);
    home.write(".env", "TONE=brief\n", 0o600);
    gateway = await runForeground(home);
    home.write(".env", "", 0o600);

    const refused = await svc(home, ["mcp", "reload", "--wait", "30"]);
    expect(refused.code).toBe(1);
    const envFile = join(home.dir, ".env");
    expect(refused.stderr).toContain(
      "refused the reload and keeps the running config — fix what is named below and run svc mcp reload again:",
    );
    expect(refused.stderr).toContain(`${envFile}: is empty (no variable in it)`);
  });
});
