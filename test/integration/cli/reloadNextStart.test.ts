import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, type Foreground, killIfRunning, runForeground, svc } from "./svc.js";

/**
 * A reload applies what it can of a file whose restart-only keys changed; when a start would refuse that
 * file (judged by its own host, or with nothing left to run), the reload says so, as `svc config check`
 * does, rather than leaving it to a restart that then fails.
 */
describe("svc gateway run: a reload of a file the next start would refuse", { timeout: 60_000 }, () => {
  let home: TempHome;
  let gateway: Foreground | undefined;
  afterEach(async () => {
    await killIfRunning(gateway);
    gateway = undefined;
    home.cleanup();
  });

  const gatewayLog = () => readFileSync(join(home.dir, "logs", "gateway.log"), "utf8");
  const reloadWith = async (config: Record<string, unknown>) => {
    home.write("config.yaml", stringify(config));
    const before = gatewayLog().split("[webhook] Reloaded").length;
    gateway?.child.kill("SIGHUP");
    const deadline = Date.now() + 15_000;
    while (gatewayLog().split("[webhook] Reloaded").length === before) {
      if (Date.now() > deadline) throw new Error("timed out waiting for the reload");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return gatewayLog();
  };

  it.each([
    [
      "INSECURE_NO_AUTH with host moved to 0.0.0.0",
      (() => {
        const config = cliConfig({ r: { secret: "INSECURE_NO_AUTH" } });
        (config.platforms as { webhook: Record<string, unknown> }).webhook.host = "0.0.0.0";
        return config;
      })(),
      "platforms.webhook.routes.r.secret: INSECURE_NO_AUTH is only allowed on a loopback bind",
    ],
    [
      "the webhook adapter turned off with nothing else to run",
      (() => {
        const config = cliConfig({ r: { secret: "s3cret-s3cret" } });
        (config.platforms as { webhook: Record<string, unknown> }).webhook.enabled = false;
        return config;
      })(),
      "platforms.webhook.enabled is false — the webhook adapter is off, no mcp_servers are configured and no cron job is stored, so there is nothing to run",
    ],
  ])(
    "%s: applied, and named as what the next start refuses, as svc config check says",
    async (_, config, problem) => {
      home = tempHome();
      home.write("config.yaml", stringify(cliConfig({ r: { secret: "s3cret-s3cret" } })), 0o600);
      gateway = await runForeground(home, ["--port", "0"]);
      const log = await reloadWith(config);
      const file = join(home.dir, "config.yaml");
      expect(log).toContain(
        `WARN [gateway] ${file} was reloaded, but a start refuses it: the next restart fails until it is fixed (svc config check says the same):`,
      );
      expect(log).toContain(`${file}: ${problem}`);
      const check = await svc(home, ["config", "check"]);
      expect(check.code).toBe(1);
      expect(check.stdout + check.stderr).toContain(`${file}: ${problem}`);
    },
  );
});

describe("a reload that leaves a gateway with the webhook adapter off nothing to run", () => {
  let gw: TestGateway | undefined;
  afterEach(async () => {
    await gw?.stop();
    gw = undefined;
  });

  it("is applied (no restart-only key changed), and named as what the next start refuses", async () => {
    const off = { platforms: { webhook: { enabled: false } } };
    gw = await startTestGateway({
      config: stringify({ ...off, mcp_servers: { x: { command: "true", enabled: false } } }),
    });
    const running = gw;
    running.home.write("config.yaml", stringify(off));
    running.gateway.reload();
    const file = join(running.home.dir, "config.yaml");
    await expect
      .poll(() => running.logs().filter((l) => l.level === 40 && l.msg.includes("a start refuses it")))
      .toHaveLength(1);
    const warning = running.logs().find((l) => l.msg.includes("a start refuses it"))?.msg;
    expect(warning).toContain(
      `${file}: platforms.webhook.enabled is false — the webhook adapter is off, no mcp_servers are configured and no cron job is stored, so there is nothing to run`,
    );
    expect(running.logs().some((l) => l.msg.includes("after a restart"))).toBe(false);
  });
});
