import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, type Foreground, killIfRunning, runForeground, svc } from "./svc.js";

/**
 * `svc gateway status` of a gateway listening on a port it picked (`port: 0`) whose gateway.json (where it
 * records that port) was damaged or removed: the status fell back to the configuration's port, 0, which is
 * how a gateway without a listener records itself, and said `Listening: no HTTP listener — webhook adapter
 * off` (exit 0) of a gateway that was serving webhooks.
 */
let home: TempHome | undefined;
let gateway: Foreground | undefined;
afterEach(async () => {
  await killIfRunning(gateway);
  gateway = undefined;
  home?.cleanup();
});

describe("svc gateway status without a readable gateway.json", () => {
  it("says where it listens is unknown, not that the adapter is off", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig({ r: { secret: "INSECURE_NO_AUTH" } })));
    gateway = await runForeground(home, []);
    const stateFile = home.write("gateway.json", '{"pid":');
    const res = await svc(home, ["gateway", "status"]);
    expect(res.stdout).toBe(
      `Gateway: running (pid ${gateway.child.pid})\nListening: unknown — ${stateFile}, where the gateway records the port it picked (platforms.webhook.port is 0), cannot be read: it is written once the gateway listens, and again at a restart\n`,
    );
    expect(res.code).toBe(1);
  });
  it("of a gateway started with --port or --host, says where it listens is unknown, not the configuration's address", async () => {
    home = tempHome();
    // The configuration names a port the gateway does not listen on (--port 0 picks another).
    const config = cliConfig({ r: { secret: "INSECURE_NO_AUTH" } }) as { platforms: { webhook: object } };
    home.write(
      "config.yaml",
      stringify({ platforms: { webhook: { ...config.platforms.webhook, port: 18720 } } }),
    );
    gateway = await runForeground(home, ["--port", "0"]);
    const stateFile = join(home.dir, "gateway.json");
    rmSync(stateFile);
    const res = await svc(home, ["gateway", "status"]);
    expect(res.stdout).toBe(
      `Gateway: running (pid ${gateway.child.pid})\nListening: unknown — ${stateFile}, where the gateway records where it listens, cannot be read, and it was started with --port, so the configuration does not say: it is written once the gateway listens, and again at a restart\n`,
    );
    expect(res.code).toBe(1);
  });
});
