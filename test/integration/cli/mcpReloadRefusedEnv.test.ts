import { rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, type Foreground, killIfRunning, runForeground, svc } from "./svc.js";

let home: TempHome;
let gateway: Foreground | undefined;
afterEach(async () => {
  await killIfRunning(gateway);
  gateway = undefined;
  home.cleanup();
});

/**
 * `svc mcp reload` of a gateway that refuses the reload for its `.env` (left empty mid-save): the command
 * says to fix the file the refusal names, not config.yaml, which is fine.
 */
describe("svc mcp reload refused for the .env", { timeout: 60_000 }, () => {
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

/**
 * `svc mcp reload` when config.yaml became a link to nothing: the command refuses it itself, as the running
 * gateway would (it never falls back to the embedded default), not with a start's advice to remove the link,
 * which the gateway would then refuse as a config.yaml not found.
 */
describe("svc mcp reload with config.yaml a link to nothing", { timeout: 60_000 }, () => {
  it("says nothing was reloaded, with the running gateway's advice", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig({ r: { secret: "s3cret-s3cret" } })), 0o600);
    gateway = await runForeground(home);
    const config = join(home.dir, "config.yaml");
    const target = join(home.dir, "moved", "config.yaml");
    rmSync(config);
    symlinkSync(target, config);

    const refused = await svc(home, ["mcp", "reload", "--wait", "30"]);
    expect(refused.stderr).toBe(
      `svc: nothing was reloaded: the gateway (pid ${gateway.child.pid}) would refuse this config.yaml and keeps the running config — fix what is named below and run svc mcp reload again:\n${config}: is a symbolic link to ${target}, which does not exist — the running config came from this file: restore its target or point the link at the file, and reload again\n`,
    );
    expect(refused.code).toBe(1);
  });
});
