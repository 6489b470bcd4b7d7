import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, type Foreground, killIfRunning, runForeground, stoppingWithRun, svc } from "./svc.js";

describe("svc gateway setup: what the new settings do not reach yet", { timeout: 60_000 }, () => {
  let home: TempHome;
  let gateway: Foreground | undefined;
  afterEach(async () => {
    await killIfRunning(gateway);
    gateway = undefined;
    home.cleanup();
  });

  it("with the gateway running, says it runs on the old settings until restarted (not 'start the gateway')", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig()));
    gateway = await runForeground(home);
    const res = await svc(home, ["gateway", "setup", "--non-interactive", "--port", "9101"]);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(
      `The gateway is running (pid ${gateway.child.pid}) with the old settings: restart it to apply them`,
    );
    expect(res.stdout).not.toContain("Start the gateway with");
  });

  it("with the gateway running on the same adapter and port, a new secret only needs a reload (SIGHUP re-reads .env), not a restart", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig()));
    gateway = await runForeground(home);
    const pid = gateway.child.pid;
    const res = await svc(home, ["gateway", "setup", "--non-interactive", "--generate-secret"]);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(
      `The gateway is running (pid ${pid}) with this adapter and port already: the new secret applies once it reloads .env — kill -HUP ${pid} (no restart needed)`,
    );
    expect(res.stdout).not.toContain("restart it to apply them");
  });

  it("with the gateway stopping (its runs draining), says the settings apply at its next start: no restart or kill -HUP, which it ignores", async () => {
    home = tempHome();
    ({ gateway } = await stoppingWithRun(home));
    const pid = gateway.child.pid;
    const line = new RegExp(
      `The gateway \\(pid ${pid}\\) is stopping \\(since \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\): the new settings apply at its next start — svc gateway start, once svc gateway status says not running`,
    );
    for (const args of [["--port", "9101"], ["--generate-secret"]]) {
      const res = await svc(home, ["gateway", "setup", "--non-interactive", ...args]);
      expect(res.code).toBe(0);
      expect(res.stdout).toMatch(line);
      expect(res.stdout).not.toContain("kill -HUP");
      expect(res.stdout).not.toContain("restart it");
    }
  });

  it("a WEBHOOK_* variable of the shell's environment, which wins over .env, is named", async () => {
    home = tempHome();
    const res = await svc(home, ["gateway", "setup", "--non-interactive", "--port", "9101"], {
      env: { WEBHOOK_PORT: "9000" },
    });
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/WEBHOOK_PORT is set in this shell's environment and overrides .*\.env/);
    expect(res.stdout).not.toContain("WEBHOOK_SECRET is set");
    expect(res.stdout).toContain("Start the gateway with: svc gateway start");
  });

  it("a config.yaml the gateway would refuse is named after the settings are written, instead of 'start the gateway'", async () => {
    home = tempHome();
    home.write("config.yaml", "platforms:\n  webhook:\n    routes:\n      a:\n        evnts: [push]\n");
    const res = await svc(home, ["gateway", "setup", "--non-interactive"]);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain("Note: the gateway will not start until this is fixed:");
    expect(res.stdout).toMatch(/config\.yaml: platforms\.webhook\.routes\.a: unknown key "evnts"/);
    expect(res.stdout).not.toContain("Start the gateway with");
  });

  it("a config.yaml that loads but breaks a startup rule (INSECURE_NO_AUTH on every interface) is named too", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      "platforms:\n  webhook:\n    host: 0.0.0.0\n    routes:\n      open:\n        secret: INSECURE_NO_AUTH\n",
    );
    const res = await svc(home, ["gateway", "setup", "--non-interactive"]);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain("Note: the gateway will not start until this is fixed:");
    expect(res.stdout).toMatch(/config\.yaml: platforms\.webhook\.routes\.open.*INSECURE_NO_AUTH/);
    expect(res.stdout).not.toContain("Start the gateway with");
    const start = await svc(home, ["gateway", "run", "--port", "0"], { timeoutMs: 20_000 });
    expect(start.code).not.toBe(0);
    expect(start.stderr).toMatch(/routes\.open.*INSECURE_NO_AUTH/);
  });
});
