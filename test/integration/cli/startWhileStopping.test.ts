import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";
import { cliConfig, type Foreground, killIfRunning, runForeground, svc, waitFor } from "./svc.js";

/** `svc gateway start` while the gateway stops (a restart: `svc gateway stop &`, then start): it drains its runs. */
describe("svc gateway start while the gateway stops", { timeout: 60_000 }, () => {
  let home: TempHome;
  let gateway: Foreground | undefined;
  afterEach(async () => {
    await killIfRunning(gateway);
    gateway = undefined;
    home.cleanup();
  });

  it("says it is stopping and to start it once it has stopped, not to stop it (exit 2, nothing started)", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({
        ...cliConfig({ r: { secret: "INSECURE_NO_AUTH" } }),
        // The run outlasts the test: the stop drains it while start is asked for.
        agent: { provider: "command", command: ["sh", "-c", "cat >/dev/null; sleep 30"] },
        gateway: { drain_timeout_seconds: 30 },
      }),
    );
    gateway = await runForeground(home, ["--port", "0"]);
    expect((await postJson(`http://127.0.0.1:${gateway.port}/webhooks/r`, { n: 1 })).status).toBe(202);
    const log = () => readFileSync(join(home.dir, "logs", "gateway.log"), "utf8");
    gateway.child.kill("SIGTERM");
    await waitFor(() => log().includes("[gateway] SIGTERM received, stopping"), "the stop");
    await waitFor(
      () =>
        (JSON.parse(readFileSync(join(home.dir, "gateway.json"), "utf8")) as { stopping_since?: string })
          .stopping_since !== undefined,
      "gateway.json saying it is stopping",
    );
    const res = await svc(home, ["gateway", "start"]);
    expect(res.code).toBe(2);
    expect(res.stdout).toBe("");
    expect(res.stderr).toMatch(
      new RegExp(
        `^svc: the gateway is stopping \\(pid ${gateway.child.pid}, since \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\): its runs in flight finish first, or are kept for the next start — once it has stopped \\(svc gateway status says not running\\), start it again\\n$`,
      ),
    );
    expect(res.stderr).not.toContain("stop it with svc gateway stop");
    // The foreground start (a supervisor's restart) is told the same.
    const run = await svc(home, ["gateway", "run", "--port", "0"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      new RegExp(
        `^svc: the gateway is stopping \\(pid ${gateway.child.pid}, since [^)]+\\): .* start it again\\n$`,
      ),
    );
  });
});
