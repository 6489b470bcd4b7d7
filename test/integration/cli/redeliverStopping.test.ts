import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";
import { cliConfig, type Foreground, killIfRunning, runForeground, svc, waitFor } from "./svc.js";

/** `svc webhook redeliver` while the gateway stops: its listener is closed, but it runs until its runs drain. */
describe("svc webhook redeliver while the gateway stops", { timeout: 60_000 }, () => {
  let home: TempHome;
  let gateway: Foreground | undefined;
  afterEach(async () => {
    await killIfRunning(gateway);
    gateway = undefined;
    home.cleanup();
  });

  it("says the gateway is stopping (exit 1), not that it should be started", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({
        ...cliConfig({ r: { secret: "INSECURE_NO_AUTH" } }),
        // The run outlasts the test: the stop drains it while the redelivery is sent.
        agent: { provider: "command", command: ["sh", "-c", "cat >/dev/null; sleep 30"] },
        gateway: { drain_timeout_seconds: 30 },
      }),
    );
    gateway = await runForeground(home, ["--port", "0"]);
    const accepted = await postJson(`http://127.0.0.1:${gateway.port}/webhooks/r`, { n: 1 });
    expect(accepted.status).toBe(202);
    const id = accepted.body.delivery_id as string;
    const log = () => readFileSync(join(home.dir, "logs", "gateway.log"), "utf8");
    gateway.child.kill("SIGTERM");
    await waitFor(() => log().includes("[gateway] SIGTERM received, stopping"), "the stop");
    const res = await svc(home, ["webhook", "redeliver", id]);
    expect(res.code).toBe(1);
    expect(res.stdout).toBe("");
    expect(res.stderr).toMatch(
      new RegExp(
        `^svc: cannot reach the gateway at http://127\\.0\\.0\\.1:${gateway.port}/webhooks/r \\(.*\\) — the gateway of .* \\(pid ${gateway.child.pid}\\) is stopping \\(since \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\) and takes no new requests — once it has stopped, start it again \\(svc gateway start\\) and run this command again\\n$`,
      ),
    );
    expect(res.stderr).not.toContain("start it with svc gateway start");
  });
});
