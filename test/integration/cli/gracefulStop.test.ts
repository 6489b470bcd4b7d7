import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { coalesceNote } from "../../../src/actors/coalescer.js";
import { RECORDER_AGENT, recorderAgent } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";
import { cliConfig, svc } from "./svc.js";

describe("graceful stop observed from outside (issue 3 Tests)", { timeout: 90_000 }, () => {
  const home = tempHome();
  afterAll(async () => {
    await svc(home, ["gateway", "stop"]);
    home.cleanup();
  });

  it("burst → svc gateway stop → each coalesced group produced exactly one run with the latest event", async () => {
    home.write("agent/recorder.sh", RECORDER_AGENT, 0o755);
    home.write(
      "config.yaml",
      stringify(
        cliConfig(
          {
            gh: {
              secret: "INSECURE_NO_AUTH",
              prompt: "PR {pull_request.number} rev {rev}",
              coalesce: { key: "pull_request.number", window_seconds: 120 },
            },
          },
          { agent: recorderAgent() },
        ),
      ),
    );
    const started = await svc(home, ["gateway", "start", "--timeout", "60"]);
    expect(started.code).toBe(0);
    const port = /listening on 127\.0\.0\.1:(\d+)/.exec(started.stdout)?.[1];
    const sends = [];
    for (let rev = 0; rev < 4; rev++) {
      for (let number = 1; number <= 3; number++) {
        sends.push(
          postJson(
            `http://127.0.0.1:${port}/webhooks/gh`,
            { pull_request: { number }, rev },
            { "x-forge-delivery": `pr${number}-rev${rev}` },
          ),
        );
      }
      await Promise.all(sends);
    }
    const answers = await Promise.all(sends);
    expect(answers.every((a) => a.status === 202 && a.body.status === "coalesced")).toBe(true);

    // config.yaml edited since the start to name Redis: the running gateway still uses its local journal
    // (state.backend takes a restart), so status and stop say what it does, and that the file names another.
    const config = readFileSync(join(home.dir, "config.yaml"), "utf8");
    home.write("config.yaml", `${config}state: { backend: redis, redis_url: "redis://127.0.0.1:1/0" }\n`);
    const changed = " (config.yaml now names state.backend: redis, which a restart would use)";
    const status = await svc(home, ["gateway", "status"]);
    expect(status.stdout).toContain(`Health: ok\nState backend: local${changed}\n`);
    const stopped = await svc(home, ["gateway", "stop"]);
    expect(stopped.code).toBe(0);
    expect(stopped.stdout).toMatch(
      new RegExp(
        `^Stopping the gateway \\(pid \\d+\\): pending coalesced events are dispatched and runs in flight finish, or are kept for the next start if still going after gateway.drain_timeout_seconds${changed.replace(/[().]/g, "\\$&")}…\n`,
      ),
    );
    expect(stopped.stdout).toContain("Gateway stopped");
    const runs = readdirSync(join(home.dir, "runs"))
      .filter((f) => f.endsWith(".json"))
      .sort();
    expect(runs).toEqual(["pr1-rev3.json", "pr2-rev3.json", "pr3-rev3.json"]);
    for (const number of [1, 2, 3]) {
      const run = JSON.parse(readFileSync(join(home.dir, "runs", `pr${number}-rev3.json`), "utf8"));
      expect(run.prompt).toBe(`${coalesceNote(3)}\n\nPR ${number} rev 3`);
    }
  });
});
