import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { type Foreground, killIfRunning, stoppingWithRun, svc } from "./svc.js";

/** `svc gateway start` while the gateway stops (a restart: `svc gateway stop &`, then start): it drains its runs. */
describe("svc gateway start while the gateway stops", { timeout: 60_000 }, () => {
  let home: TempHome;
  let gateway: Foreground | undefined;
  afterEach(async () => {
    await killIfRunning(gateway);
    gateway = undefined;
    home.cleanup();
  });

  it("says it is stopping and to start it once it has stopped, not to stop it (exit 2, nothing started); with config.yaml edited since to name state.backend: redis, what the running gateway does (its runs kept) and that the file names another, and status says so too", async () => {
    home = tempHome();
    ({ gateway } = await stoppingWithRun(home));
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
    // config.yaml edited to name Redis after this gateway started on its local journal: a run still going
    // when its drain ends is still kept for the next start (state.backend takes a restart), and the
    // commands say that the file now names another backend (gateway.json records the running one).
    const config = parse(readFileSync(join(home.dir, "config.yaml"), "utf8")) as Record<string, unknown>;
    home.write(
      "config.yaml",
      stringify({ ...config, state: { backend: "redis", redis_url: "redis://127.0.0.1:1/0" } }),
    );
    const changed = "\\(config\\.yaml now names state\\.backend: redis, which a restart would use\\)";
    const redis = await svc(home, ["gateway", "start"]);
    expect(redis.code).toBe(2);
    expect(redis.stderr).toMatch(
      new RegExp(
        `^svc: the gateway is stopping \\(pid ${gateway.child.pid}, since [^)]+\\): its runs in flight finish first, or are kept for the next start ${changed} — once it has stopped \\(svc gateway status says not running\\), start it again\\n$`,
      ),
    );
    const status = await svc(home, ["gateway", "status"]);
    expect(status.code).toBe(1);
    expect(status.stdout).toMatch(
      new RegExp(
        `Health: stopping since [^ ]+ \\(no new requests; runs in flight finish or are kept for the next start ${changed}\\)\\n$`,
      ),
    );
  });
});
