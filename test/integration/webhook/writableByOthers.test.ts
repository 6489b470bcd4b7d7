import { chmodSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import type { Gateway } from "../../../src/gateway/index.js";
import { startGatewayInHome, webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "../cli/svc.js";

/**
 * A config.yaml, route script or data directory that every user of the machine may write (left by
 * `umask 000`, a `chmod 777`, a restored backup) lets any local user make the gateway run commands as its
 * user: a route script edited, an MCP server's `command` or an agent `command` added to config.yaml. svc
 * named secret files others could read, but said nothing of places others could write.
 */

let home: TempHome | undefined;
let gateway: Gateway | undefined;
afterEach(async () => {
  await gateway?.stop();
  gateway = undefined;
  home?.cleanup();
  home = undefined;
});

/** The WARN lines of the gateway's log. */
function warnings(dir: string): string[] {
  return readFileSync(join(dir, "logs", "gateway.log"), "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as { level: number; msg: string })
    .filter((line) => line.level === 40)
    .map((line) => line.msg);
}

/** A home whose config.yaml and route script other users may write (the group-writable .env is a choice). */
function writableHome(): { config: string; scripts: string; script: string; env: string } {
  home = tempHome();
  const config = home.write(
    "config.yaml",
    stringify(webhookConfig({ pr: { secret: "${PR_SECRET}", script: "triage.py" } })),
  );
  const env = home.write(".env", "PR_SECRET=s3cret\n");
  const script = home.write("scripts/triage.py", "print('{}')\n");
  const scripts = join(home.dir, "scripts");
  chmodSync(config, 0o666);
  chmodSync(env, 0o620);
  chmodSync(scripts, 0o777);
  chmodSync(script, 0o757);
  return { config, scripts, script, env };
}

describe("places other users may write, which decide what the gateway runs", { timeout: 30_000 }, () => {
  it("the gateway's start logs a WARN naming each one, its mode and chmod o-w", async () => {
    const { config, scripts, script, env } = writableHome();
    gateway = await startGatewayInHome(home as TempHome);
    const logged = warnings((home as TempHome).dir);
    expect(logged).toContain(
      `[gateway] ${config} is writable by other users (mode 0666): any user of this machine can add routes, agent commands and MCP server commands that the gateway runs as this user — chmod o-w ${config}`,
    );
    expect(logged).toContain(
      `[gateway] ${scripts} is a directory other users may write to (mode 0777): any user of this machine can change what the route scripts run as this user — chmod o-w ${scripts}`,
    );
    expect(logged).toContain(
      `[gateway] ${script} is writable by other users (mode 0757): any user of this machine can change what the route scripts run as this user — chmod o-w ${script}`,
    );
    // Writable by its group only: not named.
    expect(logged.join("\n")).not.toContain(`${env} is writable`);
  });

  it("svc config check prints the same warnings and still passes", async () => {
    const { config, script } = writableHome();
    const result = await svc(home as TempHome, ["config", "check"]);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      `Warning: ${config} is writable by other users (mode 0666): any user of this machine can add routes, agent commands and MCP server commands that the gateway runs as this user — chmod o-w ${config}`,
    );
    expect(result.stderr).toContain(
      `Warning: ${script} is writable by other users (mode 0757): any user of this machine can change what the route scripts run as this user — chmod o-w ${script}`,
    );
  });

  it("a home with nothing others may write draws no such warning", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(webhookConfig({ pr: { secret: "s3cret" } })), 0o600);
    home.write("scripts/triage.py", "print('{}')\n", 0o700);
    chmodSync(home.dir, 0o700);
    const result = await svc(home, ["config", "check"]);
    expect(result.code).toBe(0);
    expect(result.stderr).not.toContain("other users may write");
    expect(result.stderr).not.toContain("writable by other users");
  });
});
