import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import type { Gateway } from "../../../src/gateway.js";
import { appendedRuns } from "../../helpers/appendAgent.js";
import { inHome, startGatewayInHome, webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";

/**
 * docs/webhook.md, SIGINT/SIGTERM: the pending-runs file is first written when the stop begins, so a
 * supervisor that kills the gateway before the drain is over (`docker stop`: SIGKILL after 10 s) loses
 * no accepted run. A request still in the pipeline (a script runs up to script_timeout_seconds) must not
 * hold that first save back.
 */

const OPEN = "INSECURE_NO_AUTH";
// One run slot, held until `go` exists; each finished run appends its delivery id to runs.log.
const GATED = `while [ ! -e "$0/go" ]; do sleep 0.05; done; printf "%s\\n" "$SVC_DELIVERY_ID" >> "$0/runs.log"`;
// A route script that answers only once the test creates `release-script`.
const SLOW_SCRIPT = `while [ ! -e "$(dirname "$0")/../release-script" ]; do sleep 0.05; done; cat\n`;

const homes: TempHome[] = [];
const running: Gateway[] = [];
afterEach(async () => {
  for (const home of homes) home.write("release-script", "");
  for (const gateway of running.splice(0)) await gateway.stop();
  for (const home of homes.splice(0)) home.cleanup();
});

const savedIds = (home: TempHome): string[] => {
  const file = join(home.dir, "webhook-pending-runs.json");
  if (!existsSync(file)) return [];
  return (JSON.parse(readFileSync(file, "utf8")) as { runs: Array<{ deliveryId: string }> }).runs
    .map((run) => run.deliveryId)
    .sort();
};

describe("stop while a request is still in the pipeline (a slow route script)", { timeout: 20_000 }, () => {
  it("the accepted and coalesced runs and the seen ids are saved at once, not after the script; the in-flight event is saved too, and each runs once after a restart", async () => {
    const home = tempHome();
    homes.push(home);
    home.write("scripts/slow.sh", SLOW_SCRIPT, 0o755);
    home.write(
      "config.yaml",
      stringify(
        webhookConfig(
          {
            pr: { secret: OPEN },
            slow: { secret: OPEN, script: "slow.sh" },
            grouped: { secret: OPEN, coalesce: { key: "n", window_seconds: 60 } },
          },
          { rate_limit: 1000 },
          {
            agent: { provider: "command", command: ["sh", "-c", GATED, inHome("")], max_concurrent_runs: 1 },
          },
        ),
      ),
    );
    const gw = await startGatewayInHome(home, 300);
    const send = (route: string, id: string) =>
      postJson(`http://127.0.0.1:${gw.port}/webhooks/${route}`, { n: 1 }, { "X-Request-ID": id });
    expect((await send("pr", "a1")).status).toBe(202);
    expect((await send("pr", "a2")).status).toBe(202);
    expect((await send("grouped", "c1")).body).toEqual({ status: "coalesced" });
    const inFlight = send("slow", "s1");
    // The script has the request once the stop begins (it blocks until released).
    await new Promise((resolve) => setTimeout(resolve, 200));

    const stopped = gw.stop();
    await vi.waitFor(() => expect(savedIds(home)).toEqual(["a1", "a2", "c1"]), {
      timeout: 2000,
      interval: 20,
    });
    const seen = JSON.parse(readFileSync(join(home.dir, "webhook-seen-ids.json"), "utf8")) as {
      ids: Array<[string, number]>;
    };
    expect(seen.ids.map(([key]) => key).sort()).toEqual(["grouped:c1", "pr:a1", "pr:a2"]);

    home.write("release-script", "");
    expect((await inFlight).body).toMatchObject({ status: "accepted", delivery_id: "s1" });
    await stopped;
    // Nothing ran (the slot is held): every accepted event is saved, the in-flight one included.
    expect(savedIds(home)).toEqual(["a1", "a2", "c1", "s1"]);
    expect(appendedRuns(home.dir).size).toBe(0);

    home.write("go", "");
    const second = await startGatewayInHome(home, 5000);
    running.push(second);
    await vi.waitFor(() => expect(appendedRuns(home.dir).size).toBe(4), { timeout: 10_000, interval: 50 });
    await second.stop();
    running.splice(0);
    expect(Object.fromEntries(appendedRuns(home.dir))).toEqual({ a1: 1, a2: 1, c1: 1, s1: 1 });
    expect(savedIds(home)).toEqual([]);
  });
});
