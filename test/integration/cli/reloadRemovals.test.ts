import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";
import { signalProcess } from "../../helpers/process.js";
import { type Foreground, killIfRunning, runForeground } from "./svc.js";

/**
 * A config.yaml read on SIGHUP while its writer had not finished it can be cut short at a point that still
 * parses: the routes and MCP servers after the cut are gone from the reloaded config. Whatever the cause, a
 * reload that takes away what the running config had names each entry at WARN, never as a routine reload.
 */

const FULL = `platforms:
  webhook:
    enabled: true
    host: 127.0.0.1
    port: 0
    rate_limit: 1000
    routes:
      alpha:
        secret: alpha-secret
      beta:
        secret: beta-secret
      gamma:
        secret: gamma-secret
mcp_servers:
  files:
    command: node
    enabled: false
`;
/** The same file cut after its first route: still valid YAML, still a valid config. */
const CUT = FULL.slice(0, FULL.indexOf("      beta:"));

describe("svc gateway run: a reload that removes routes or MCP servers names them", {
  timeout: 60_000,
}, () => {
  let home: TempHome;
  let gateway: Foreground | undefined;
  afterEach(async () => {
    await killIfRunning(gateway);
    gateway = undefined;
    home.cleanup();
  });

  const gatewayLog = () => readFileSync(join(home.dir, "logs", "gateway.log"), "utf8");
  const reloadWith = async (text: string) => {
    home.write("config.yaml", text, 0o600);
    const before = gatewayLog().split("[webhook] Reloaded").length;
    signalProcess(gateway?.child.pid ?? 0, "SIGHUP");
    const deadline = Date.now() + 15_000;
    while (gatewayLog().split("[webhook] Reloaded").length === before) {
      if (Date.now() > deadline) throw new Error("timed out waiting for the reload");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return gatewayLog();
  };

  it("a file cut after its first route: the reload is applied and the lost routes and server are named at WARN", async () => {
    home = tempHome();
    home.write("config.yaml", FULL, 0o600);
    gateway = await runForeground(home, ["--port", "0"]);
    const file = join(home.dir, "config.yaml");
    const log = await reloadWith(CUT);
    expect(log).toContain(
      `WARN [gateway] the reload of ${file} removed routes platforms.webhook.routes.beta, platforms.webhook.routes.gamma (they answer 404 unless a subscription of that name serves them) and MCP server mcp_servers.files (stopped, its tools no longer offered) — if that was not meant (a file saved or copied while the gateway read it can be cut short and still parse), put them back in ${file} and reload again (SIGHUP, or svc mcp reload)`,
    );
    expect(log).toContain(`[webhook] Reloaded ${file} — routes: alpha`);
    const beta = await postJson(`http://127.0.0.1:${gateway.port}/webhooks/beta`, "{}", {
      authorization: "Bearer beta-secret",
    });
    expect(beta.status).toBe(404);
    // Put back: nothing is removed, so nothing more is said.
    const restored = await reloadWith(FULL);
    expect(restored.split("removed routes").length).toBe(2);
    expect(restored).toContain(`[webhook] Reloaded ${file} — routes: alpha, beta, gamma`);
  });
});
